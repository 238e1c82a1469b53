# The two dependency targets ember_core links that are not a package's own imported targets:
# LibTorch's flags and libraries, and PCRE2. The build (EmberDependencies.cmake) and the installed
# CMake package (emberConfig.cmake.in, docs/install.md) both define them with these functions, so
# a program linking the installed ember::core gets the same flags from its own find_package(Torch).
# IMPORTED: a target local to the calling directory, as a package config file makes them.

function(_ember_interface_target name)
  if(ARGN STREQUAL "IMPORTED")
    add_library(${name} INTERFACE IMPORTED)
  else()
    add_library(${name} INTERFACE)
  endif()
endfunction()

# After find_package(Torch): its libraries, include directories (SYSTEM) and flags (the ABI
# define), and -rpath-link to the torch wheel's nvidia-* libraries.
function(ember_torch_target name)
  _ember_interface_target(${name} ${ARGN})
  target_link_libraries(${name} INTERFACE ${TORCH_LIBRARIES})
  target_include_directories(${name} SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
  separate_arguments(_torch_flags UNIX_COMMAND "${TORCH_CXX_FLAGS}")
  target_compile_options(${name} INTERFACE $<$<COMPILE_LANGUAGE:CXX>:${_torch_flags}>)
  # The PyPI wheel's libtorch_cuda.so needs the CUDA libraries of the venv's nvidia-* wheels (NCCL,
  # cuDNN, ...), which may be newer than /usr/local/cuda's. Point the linker at them first so that
  # it does not resolve e.g. libnccl.so.2 against the older system copy. At run time the wheel's
  # own RPATH ($ORIGIN/../../nvidia/...) finds them.
  get_filename_component(_site "${Torch_DIR}/../../../.." ABSOLUTE)
  file(GLOB _nvidia_libs LIST_DIRECTORIES true "${_site}/nvidia/*/lib")
  foreach(_dir ${_nvidia_libs})
    target_link_options(${name} INTERFACE "-Wl,-rpath-link,${_dir}")
  endforeach()
endfunction()

# PCRE2 (8-bit, UTF + UCP, JIT): the tokenizer's Unicode pre-tokenisation regexes. Through
# pkg-config where there is one; else (a bare CUDA image with the libraries unpacked into a prefix
# by bench/gpu_check.sh) by plain header and library search.
function(ember_pcre2_target name)
  _ember_interface_target(${name} ${ARGN})
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(PCRE2 QUIET IMPORTED_TARGET libpcre2-8)
  endif()
  if(TARGET PkgConfig::PCRE2)
    target_link_libraries(${name} INTERFACE PkgConfig::PCRE2)
    return()
  endif()
  find_path(EMBER_PCRE2_INCLUDE_DIR pcre2.h)
  find_library(EMBER_PCRE2_LIBRARY pcre2-8)
  if(NOT EMBER_PCRE2_INCLUDE_DIR OR NOT EMBER_PCRE2_LIBRARY)
    message(FATAL_ERROR "ember: PCRE2 (libpcre2-dev) not found: no pkg-config module libpcre2-8 and "
      "no pcre2.h / libpcre2-8 on CMAKE_PREFIX_PATH")
  endif()
  target_include_directories(${name} SYSTEM INTERFACE ${EMBER_PCRE2_INCLUDE_DIR})
  target_link_libraries(${name} INTERFACE ${EMBER_PCRE2_LIBRARY})
endfunction()

# Apache Arrow's Parquet reader (`ember prepare text` on .parquet files): the C++ libraries and
# headers of the pyarrow wheel in torch's venv (scripts/requirements.txt pins it), as there is no
# Debian package of Arrow. Optional: sets EMBER_ARROW_FOUND in the caller; without it, a .parquet
# input is refused with the remedy. The libraries are linked by path, so programs find them
# through their RPATH as they find LibTorch's.
function(ember_arrow_target name)
  get_filename_component(_site "${Torch_DIR}/../../../.." ABSOLUTE)
  set(_pyarrow "${_site}/pyarrow")
  file(GLOB _libs "${_pyarrow}/libarrow.so.*" "${_pyarrow}/libparquet.so.*")
  list(FILTER _libs INCLUDE REGEX "/lib(arrow|parquet)\\.so\\.[0-9]+$")
  list(LENGTH _libs _found)
  if(NOT _found EQUAL 2 OR NOT EXISTS "${_pyarrow}/include/parquet/arrow/reader.h")
    set(EMBER_ARROW_FOUND FALSE PARENT_SCOPE)
    return()
  endif()
  _ember_interface_target(${name} ${ARGN})
  target_link_libraries(${name} INTERFACE ${_libs})
  set(EMBER_ARROW_FOUND TRUE PARENT_SCOPE)
  set(EMBER_ARROW_INCLUDE_DIR "${_pyarrow}/include" PARENT_SCOPE)
endfunction()

# zlib and libzstd (Debian: zlib1g-dev, libzstd-dev): `.gz` and `.zst` inputs of `ember prepare
# text`. Optional as Arrow is: sets EMBER_ZLIB_FOUND and EMBER_ZSTD_FOUND in the caller.
function(ember_compression_target name)
  _ember_interface_target(${name} ${ARGN})
  find_package(ZLIB QUIET)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(ZSTD QUIET IMPORTED_TARGET libzstd)
  endif()
  if(ZLIB_FOUND)
    target_link_libraries(${name} INTERFACE ZLIB::ZLIB)
  endif()
  if(TARGET PkgConfig::ZSTD)
    target_link_libraries(${name} INTERFACE PkgConfig::ZSTD)
  endif()
  set(EMBER_ZLIB_FOUND ${ZLIB_FOUND} PARENT_SCOPE)
  set(EMBER_ZSTD_FOUND ${ZSTD_FOUND} PARENT_SCOPE)
endfunction()
