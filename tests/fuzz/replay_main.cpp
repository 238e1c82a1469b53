// The fuzz targets without a fuzzing engine (ctest label `fuzz`): replays every file of the
// folders and files given, in name order, through the target's LLVMFuzzerTestOneInput, so an input
// that once crashed fails the suite in seconds. A folder with no input is an error: the corpus is
// part of the test.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

std::vector<std::filesystem::path> inputs_of(const std::filesystem::path& arg) {
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_directory(arg)) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(arg))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
  } else if (std::filesystem::is_regular_file(arg)) {
    files.push_back(arg);
  }
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  for (int i = 1; i < argc; ++i) {
    const auto files = inputs_of(argv[i]);
    if (files.empty()) {
      std::fprintf(stderr, "%s: no input in '%s'\n", argv[0], argv[i]);
      return 1;
    }
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      const std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    }
    std::printf("replayed %zu inputs of %s\n", files.size(), argv[i]);
  }
  return 0;
}
