// safetensors from outside (`ember import hf`, `ember capacity`): the 8-byte header length, the
// JSON header (dtypes, shapes, data offsets) and the data. Every tensor the header lists must load
// with the shape and dtype the header gave.
#include <cstring>

#include "ember/io/safetensors.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ember;
  const auto file = fuzz::input_file("input.safetensors", fuzz::as_text(data, size));
  fuzz::expect_clean_errors([&] {
    const SafetensorsHeader header = read_safetensors_header(file);
    std::map<std::string, std::string> metadata;
    const TensorMap tensors = load_safetensors(file, &metadata);
    fuzz::require(tensors.size() == header.tensors.size(), "load_safetensors returns every tensor of the header");
    fuzz::require(metadata == header.metadata, "the metadata read twice agrees");
    for (const auto& [name, entry] : header.tensors) {
      const at::Tensor t = tensors.at(name);
      fuzz::require(t.sizes().vec() == entry.shape && t.scalar_type() == entry.dtype, "a tensor as its header entry");
      const at::Tensor alone = load_safetensors_tensor(file, name);  // bytes compared: NaN != NaN
      fuzz::require(alone.nbytes() == t.nbytes() &&
                        (t.nbytes() == 0 || std::memcmp(alone.data_ptr(), t.data_ptr(), t.nbytes()) == 0),
                    "one tensor read alone equals the whole read");
    }
  });
  return 0;
}
