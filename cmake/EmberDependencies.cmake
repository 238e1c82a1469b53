# Third-party dependencies: LibTorch (PyPI wheel via CMAKE_PREFIX_PATH, or Debian's 1.13), and the
# Debian -dev packages installed by scripts/setup.sh. fmt is used header-only: the torch wheel
# ships fmt 12 headers ahead of Debian's fmt 9 on the include path. spdlog is Debian's 1.10 (shared
# libspdlog.so.1.10, SPDLOG_FMT_EXTERNAL, linked to libfmt.so.9); it does not compile against fmt 12,
# so only src/util/log.cpp sees it, in the ember_log library without torch's include directories
# (src/CMakeLists.txt, docs/platform.md). Both fmt versions then sit in one binary, apart in their
# inline namespaces fmt::v12 and fmt::v9.
# Torch's CMake adds -gencode flags for the CUDA architectures it detects or is told; with no GPU
# its default list includes compute_50, which nvcc 13 rejects. Ampere and Hopper by default, with
# Hopper's PTX for newer GPUs to compile at load (the model checks at run time that ember's kernels
# load on the device, and falls back to ATen ops where they do not).
if(NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
  set(ENV{TORCH_CUDA_ARCH_LIST} "8.0;9.0+PTX")
endif()
find_package(Torch REQUIRED)
find_package(Threads REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(spdlog REQUIRED)

# Torch's exported flags carry the ABI define; keep them on every target that links torch.
include(EmberDependencyTargets)
ember_torch_target(ember_torch)
# ember_log (spdlog) is compiled without these flags, with the compiler's default new string ABI,
# as Debian's libspdlog is; a LibTorch built for the old ABI cannot share std::string with it.
if(TORCH_CXX_FLAGS MATCHES "_GLIBCXX_USE_CXX11_ABI=0")
  message(FATAL_ERROR "ember: this LibTorch uses the pre-C++11 std::string ABI "
    "(_GLIBCXX_USE_CXX11_ABI=0); Debian's spdlog and the other -dev libraries use the new one.")
endif()
message(STATUS "ember: Torch ${Torch_VERSION} from ${Torch_DIR}")

# The torch wheel's site-packages (src/CMakeLists.txt looks for the nvidia-nccl wheel's nccl.h there).
get_filename_component(_ember_site "${Torch_DIR}/../../../.." ABSOLUTE)

ember_pcre2_target(ember_pcre2)

# Corpus formats of `ember prepare text` (src/data/byte_stream.cpp, src/data/parquet_text.cpp).
ember_arrow_target(ember_arrow)
ember_compression_target(ember_compression)
if(EMBER_ARROW_FOUND)
  message(STATUS "ember: Parquet input through pyarrow's Arrow in ${EMBER_ARROW_INCLUDE_DIR}")
else()
  message(STATUS "ember: no pyarrow beside torch: Parquet input is disabled (pip install -r scripts/requirements.txt)")
endif()
foreach(_format ZLIB ZSTD)
  if(NOT EMBER_${_format}_FOUND)
    message(STATUS "ember: ${_format} not found: its compressed inputs are disabled (scripts/setup.sh installs it)")
  endif()
endforeach()

# PLplot (Debian: libplplot-dev + plplot-driver-cairo) draws `ember capacity --plot`; optional,
# without it that flag says so and everything else works.
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PLPLOT QUIET IMPORTED_TARGET plplot)
endif()
if(PLPLOT_FOUND)
  message(STATUS "ember: PLplot ${PLPLOT_VERSION} for capacity plots")
else()
  message(STATUS "ember: PLplot not found: `ember capacity --plot` is disabled")
endif()
