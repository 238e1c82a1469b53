# ccache as compiler launcher when present (docs/building.md, "The edit-build loop"):
# - sloppiness pch_defines, time_macros, include_file_mtime, include_file_ctime: the settings
#   ccache's manual names for caching TUs that use a GCC precompiled header (CMake passes it with
#   -include, which ccache follows) and for headers written just before the compile;
# - base_dir = this source tree: absolute paths inside the clone are hashed relative to the build
#   directory, so a second clone in another folder hits the first clone's entries (paths outside
#   the clone, such as the shared venv's torch headers, stay absolute and agree anyway);
# - hash_dir off: with -g the working directory would otherwise be part of every hash;
# - inode_cache: the hashes of the files a TU includes (LibTorch's headers, the 565 MB precompiled
#   header) are kept between compiler runs, keyed by device, inode, size, mtime and ctime; a direct-
#   mode hit hashed them all again (0.49 s a TU, 0.04 s now): a fresh tree served from the cache, as
#   python.wheel builds, took 10.1 s for libember_ops's 56 TUs.
# The cache is ccache's own (~/.cache/ccache, or $CCACHE_DIR at build time).
find_program(EMBER_CCACHE ccache)
if(EMBER_CCACHE)
  set(_ember_ccache_env
      "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime"
      "CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}" "CCACHE_NOHASHDIR=1" "CCACHE_INODECACHE=1")
  set(_ember_launcher ${CMAKE_COMMAND} -E env ${_ember_ccache_env} ${EMBER_CCACHE})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${_ember_launcher})
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${_ember_launcher})
  # A miss in direct mode runs the preprocessor; -fpch-preprocess keeps the .gch in use there
  # instead of expanding all of LibTorch's headers again (GCC only; harmless for real compiles).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fpch-preprocess>)
  endif()
  message(STATUS "ember: using ccache ${EMBER_CCACHE} (base_dir ${PROJECT_SOURCE_DIR})")
endif()
# Unix Makefiles rewrite a target's flags.make when one of its sources is added or removed (one
# line of PCH options per source), and every object of that target depends on flags.make: adding
# one file then recompiles the whole library. Ninja has no such file.
if(CMAKE_GENERATOR MATCHES "Makefiles")
  message(STATUS "ember: generator '${CMAKE_GENERATOR}' recompiles a whole target when a source is added; "
    "configure with -G Ninja (Debian: ninja-build) for an incremental edit-build loop")
endif()
