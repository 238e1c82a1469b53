// NumPy .npy files (token shards, `ember capacity` embeddings): the preamble, the header dict and
// the array. A parsed header and a loaded array must agree on shape, and the array fits the file.
#include "ember/io/npy.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ember;
  fuzz::expect_clean_errors([&] {
    const NpyHeader h = parse_npy_header(data, size, "fuzz input");
    fuzz::require(h.data_offset <= size, "the header ends inside the bytes it was parsed from");
  });
  const auto file = fuzz::input_file("input.npy", fuzz::as_text(data, size));
  fuzz::expect_clean_errors([&] {
    const at::Tensor t = load_npy(file);
    const NpyHeader h = parse_npy_header(data, size, "fuzz input");
    fuzz::require(t.sizes().vec() == h.shape, "the array has the header's shape");
    fuzz::require(h.data_offset + static_cast<size_t>(t.nbytes()) <= size, "the array lies inside the file");
  });
  return 0;
}
