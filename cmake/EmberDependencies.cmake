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
add_library(ember_torch INTERFACE)
target_link_libraries(ember_torch INTERFACE ${TORCH_LIBRARIES})
target_include_directories(ember_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
separate_arguments(_torch_flags UNIX_COMMAND "${TORCH_CXX_FLAGS}")
target_compile_options(ember_torch INTERFACE $<$<COMPILE_LANGUAGE:CXX>:${_torch_flags}>)
# ember_log (spdlog) is compiled without these flags, with the compiler's default new string ABI,
# as Debian's libspdlog is; a LibTorch built for the old ABI cannot share std::string with it.
if(TORCH_CXX_FLAGS MATCHES "_GLIBCXX_USE_CXX11_ABI=0")
  message(FATAL_ERROR "ember: this LibTorch uses the pre-C++11 std::string ABI "
    "(_GLIBCXX_USE_CXX11_ABI=0); Debian's spdlog and the other -dev libraries use the new one.")
endif()
message(STATUS "ember: Torch ${Torch_VERSION} from ${Torch_DIR}")

# The PyPI wheel's libtorch_cuda.so needs the CUDA libraries of the venv's nvidia-* wheels (NCCL,
# cuDNN, ...), which may be newer than /usr/local/cuda's. Point the linker at them first so that it
# does not resolve e.g. libnccl.so.2 against the older system copy. At run time the wheel's own
# RPATH ($ORIGIN/../../nvidia/...) finds them.
get_filename_component(_ember_site "${Torch_DIR}/../../../.." ABSOLUTE)
file(GLOB _ember_nvidia_libs LIST_DIRECTORIES true "${_ember_site}/nvidia/*/lib")
foreach(_dir ${_ember_nvidia_libs})
  target_link_options(ember_torch INTERFACE "-Wl,-rpath-link,${_dir}")
endforeach()

# PCRE2 (8-bit, UTF + UCP, JIT): the tokenizer's Unicode pre-tokenisation regexes.
# Through pkg-config where there is one; else (a bare CUDA image with the libraries unpacked into a
# prefix by bench/gpu_check.sh) by plain header and library search.
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PCRE2 QUIET IMPORTED_TARGET libpcre2-8)
endif()
add_library(ember_pcre2 INTERFACE)
if(TARGET PkgConfig::PCRE2)
  target_link_libraries(ember_pcre2 INTERFACE PkgConfig::PCRE2)
else()
  find_path(EMBER_PCRE2_INCLUDE_DIR pcre2.h)
  find_library(EMBER_PCRE2_LIBRARY pcre2-8)
  if(NOT EMBER_PCRE2_INCLUDE_DIR OR NOT EMBER_PCRE2_LIBRARY)
    message(FATAL_ERROR "ember: PCRE2 (libpcre2-dev) not found: no pkg-config module libpcre2-8 and "
      "no pcre2.h / libpcre2-8 on CMAKE_PREFIX_PATH")
  endif()
  target_include_directories(ember_pcre2 SYSTEM INTERFACE ${EMBER_PCRE2_INCLUDE_DIR})
  target_link_libraries(ember_pcre2 INTERFACE ${EMBER_PCRE2_LIBRARY})
endif()

# PLplot (Debian: libplplot-dev + plplot-driver-cairo) draws `ember capacity --plot`; optional,
# without it that flag says so and everything else works.
if(PkgConfig_FOUND)
  pkg_check_modules(PLPLOT QUIET IMPORTED_TARGET plplot)
endif()
if(PLPLOT_FOUND)
  message(STATUS "ember: PLplot ${PLPLOT_VERSION} for capacity plots")
else()
  message(STATUS "ember: PLplot not found: `ember capacity --plot` is disabled")
endif()
