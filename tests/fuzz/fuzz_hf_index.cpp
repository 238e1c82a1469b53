// model.safetensors.index.json of a sharded Hugging Face checkpoint, as `ember import hf` reads the
// weights (read_hf_weights) and `ember capacity` finds the embedding (load_embedding_matrix). The
// folder holds two real shards; the index is the input. What loads must be those shards' tensors.
#include <torch/torch.h>

#include "ember/analysis/embedding_source.h"
#include "ember/interop/hf_files.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

const ember::TensorMap& shard_tensors() {
  static const ember::TensorMap tensors = {
      {"model.embed_tokens.weight", torch::arange(24, torch::kFloat32).reshape({6, 4})},
      {"model.norm.weight", torch::ones({4})},
      {"lm_head.weight", torch::arange(24, torch::kFloat32).reshape({6, 4}).flip(0)}};
  return tensors;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const auto& t = shard_tensors();
  const auto dir = ember::fuzz::scratch_dir();
  ember::save_safetensors(dir / "model-00001-of-00002.safetensors", {{"model.embed_tokens.weight", t.at("model.embed_tokens.weight")}});
  ember::save_safetensors(dir / "model-00002-of-00002.safetensors",
                          {{"model.norm.weight", t.at("model.norm.weight")}, {"lm_head.weight", t.at("lm_head.weight")}});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ember;
  const auto index = fuzz::input_file("model.safetensors.index.json", fuzz::as_text(data, size));
  const auto matches = [](const std::string& name, const at::Tensor& t) {
    const auto it = shard_tensors().find(name);
    return it != shard_tensors().end() && it->second.equal(t);
  };
  fuzz::expect_clean_errors([&] {
    for (const auto& [name, t] : read_hf_weights(index.parent_path()))
      fuzz::require(matches(name, t), "read_hf_weights returns the shards' tensors");
  });
  fuzz::expect_clean_errors([&] {
    const EmbeddingMatrix m = load_embedding_matrix(index);
    fuzz::require(matches(m.tensor, m.matrix), "the embedding found is a shard's tensor");
  });
  return 0;
}
