# ccache as compiler launcher when present. The sloppiness settings let it cache TUs that use the
# precompiled torch header.
find_program(EMBER_CCACHE ccache)
if(EMBER_CCACHE)
  set(_ember_launcher ${CMAKE_COMMAND} -E env
      "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime"
      ${EMBER_CCACHE})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${_ember_launcher})
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${_ember_launcher})
  message(STATUS "ember: using ccache ${EMBER_CCACHE}")
endif()
