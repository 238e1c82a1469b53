# Unity builds by folder (docs/building.md, "Where the compile time goes"). Most of a TU's compile
# time is spent generating the inline and template code of the headers it shares with its
# neighbours (ATen's Tensor methods, fmt, nlohmann::json, CLI11), once per TU; compiled together,
# the sources of one folder generate it once. src/data's 17 files: 197 s one by one, 23 s as one.
#
# Groups are stable under edits: each source joins group <folder>-<k>, k = a hash of its file
# name modulo the folder's group count (about one group per EMBER_UNITY_GROUP_SIZE sources). A new
# file therefore changes one group (until its folder's group count changes), and editing a .cpp
# recompiles its group only. Sources with their own flags (SKIP_PRECOMPILE_HEADERS, per-file
# definitions or options) are compiled alone, as CMake does for such files.
# EMBER_UNITY=OFF compiles every source alone.
option(EMBER_UNITY "Compile each folder's sources in a few unity groups" ON)
set(EMBER_UNITY_GROUP_SIZE 8 CACHE STRING "Sources per unity group (about)")

function(ember_unity target)
  if(NOT EMBER_UNITY)
    return()
  endif()
  get_target_property(_sources ${target} SOURCES)
  get_target_property(_dir ${target} SOURCE_DIR)
  set(_folders "")
  foreach(_src ${_sources})
    if(NOT _src MATCHES "\\.cpp$")
      continue()
    endif()
    get_filename_component(_abs "${_src}" ABSOLUTE BASE_DIR "${_dir}")
    get_filename_component(_folder "${_abs}" DIRECTORY)
    string(MD5 _key "${_folder}")
    list(APPEND _folders ${_key})
    list(APPEND _members_${_key} "${_abs}")
    set(_name_${_key} "${_folder}")
  endforeach()
  list(REMOVE_DUPLICATES _folders)
  foreach(_key ${_folders})
    list(LENGTH _members_${_key} _n)
    math(EXPR _groups "(${_n} + ${EMBER_UNITY_GROUP_SIZE} - 1) / ${EMBER_UNITY_GROUP_SIZE}")
    file(RELATIVE_PATH _label "${PROJECT_SOURCE_DIR}" "${_name_${_key}}")
    string(MAKE_C_IDENTIFIER "${_label}" _label)
    foreach(_abs ${_members_${_key}})
      get_filename_component(_file "${_abs}" NAME)
      string(MD5 _hash "${_file}")
      string(SUBSTRING "${_hash}" 0 6 _hash)
      math(EXPR _k "0x${_hash} % ${_groups}")
      set_property(SOURCE "${_abs}" TARGET_DIRECTORY ${target} PROPERTY UNITY_GROUP "${_label}_${_k}")
    endforeach()
  endforeach()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
  # An included .cpp counts as a header to GCC, which then warns about its anonymous-namespace
  # test fixtures as if they were in a header.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-subobject-linkage>)
  endif()
endfunction()
