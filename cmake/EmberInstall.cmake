# `cmake --install build --prefix P` (docs/install.md): bin/ember, the core library and the
# libraries it links statically, the public headers, the tokenizer rank files and their licences
# under share/ember/tokenizers, and a CMake package (lib/cmake/ember) so that a downstream project
# writes find_package(ember) and target_link_libraries(app ember::core). The precompiled header,
# the unity groups and the warnings are PRIVATE to the targets and stay out of the export.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The installed CLI finds LibTorch (the venv's, outside any system folder) through its RPATH.
set_target_properties(ember PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS ember RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(_ember_export_targets ember_core ember_log)
if(EMBER_HAVE_CUDA)
  set_target_properties(ember_cuda_kernels PROPERTIES EXPORT_NAME cuda_kernels)
  list(APPEND _ember_export_targets ember_cuda_kernels)
endif()
install(TARGETS ${_ember_export_targets} EXPORT emberTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ember DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  PATTERN pch.h EXCLUDE)

# The rank files with their licences and provenance (third_party/tokenizers/README.md); the
# conformance data (encodings.json, TestPlans.txt) is the tests' and stays in the repository.
file(GLOB _ember_tokenizer_files ${PROJECT_SOURCE_DIR}/third_party/tokenizers/*.tiktoken
  ${PROJECT_SOURCE_DIR}/third_party/tokenizers/LICENSE-*)
install(FILES ${_ember_tokenizer_files} ${PROJECT_SOURCE_DIR}/third_party/tokenizers/NOTICE
  ${PROJECT_SOURCE_DIR}/third_party/tokenizers/README.md DESTINATION ${CMAKE_INSTALL_DATADIR}/ember/tokenizers)
# The build tree's binaries (tools/ember, tests/, bench/) find them at the same place relative to
# themselves: <build>/share/ember/tokenizers links to the source folder.
file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/share/ember)
if(NOT EXISTS ${PROJECT_BINARY_DIR}/share/ember/tokenizers)
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/third_party/tokenizers ${PROJECT_BINARY_DIR}/share/ember/tokenizers SYMBOLIC)
endif()

set(_ember_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/ember)
install(EXPORT emberTargets NAMESPACE ember:: DESTINATION ${_ember_cmake_dir})
set(EMBER_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR})  # relative to the prefix, or absolute
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/emberConfig.cmake.in
  ${PROJECT_BINARY_DIR}/emberConfig.cmake INSTALL_DESTINATION ${_ember_cmake_dir} PATH_VARS EMBER_INSTALL_DATADIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/emberConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/emberConfig.cmake ${PROJECT_BINARY_DIR}/emberConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/EmberDependencyTargets.cmake DESTINATION ${_ember_cmake_dir})
