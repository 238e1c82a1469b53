# Third-party dependencies: LibTorch (PyPI wheel via CMAKE_PREFIX_PATH, or Debian's 1.13), and the
# Debian -dev packages installed by scripts/setup.sh. fmt is used header-only: the torch wheel
# ships fmt 12 headers ahead of Debian's fmt 9 on the include path (see docs/platform.md).
# Torch's CMake adds -gencode flags for the CUDA architectures it detects or is told; with no GPU
# its default list includes compute_50, which nvcc 13 rejects. Ampere and Hopper by default.
if(NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
  set(ENV{TORCH_CUDA_ARCH_LIST} "8.0;9.0")
endif()
find_package(Torch REQUIRED)
find_package(Threads REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(OpenSSL REQUIRED)

# Torch's exported flags carry the ABI define; keep them on every target that links torch.
add_library(ember_torch INTERFACE)
target_link_libraries(ember_torch INTERFACE ${TORCH_LIBRARIES})
target_include_directories(ember_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
separate_arguments(_torch_flags UNIX_COMMAND "${TORCH_CXX_FLAGS}")
target_compile_options(ember_torch INTERFACE $<$<COMPILE_LANGUAGE:CXX>:${_torch_flags}>)
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
find_package(PkgConfig REQUIRED)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)

# PLplot (Debian: libplplot-dev + plplot-driver-cairo) draws `ember capacity --plot`; optional,
# without it that flag says so and everything else works.
pkg_check_modules(PLPLOT QUIET IMPORTED_TARGET plplot)
if(PLPLOT_FOUND)
  message(STATUS "ember: PLplot ${PLPLOT_VERSION} for capacity plots")
else()
  message(STATUS "ember: PLplot not found: `ember capacity --plot` is disabled")
endif()
