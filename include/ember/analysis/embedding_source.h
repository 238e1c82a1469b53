// Where an embedding matrix for capacity analysis comes from (docs/capacity.md):
//   an ember run or checkpoint directory  the model's input embedding, materialised as V x D
//                                         (tied/untied tables; LEV and other generated kinds
//                                         through Embedding::materialize)
//   a .safetensors file                   Hugging Face style, fp32 / fp16 / bf16
//   model.safetensors.index.json          a sharded checkpoint: only the shard holding the tensor
//   a directory holding either of these   e.g. a downloaded Hugging Face model
//   a .npy file                           a matrix saved with numpy.save
// The tensor is found by the usual names (model.embed_tokens.weight, transformer.wte.weight, ...)
// unless one is named; for ember checkpoints a name picks any 2-D parameter (e.g. head.weight).
#pragma once
#include <ATen/ATen.h>

#include <filesystem>
#include <string>
#include <vector>

#include "ember/config/enum_names.h"

namespace ember {

// Whether the output head reuses the input table; unknown for a .npy, or a tensor other than the
// input embedding.
enum class HeadTying { unknown, tied, untied };
inline std::span<const EnumName<HeadTying>> enum_names(HeadTying) {
  static constexpr EnumName<HeadTying> names[] = {
      {HeadTying::unknown, ""}, {HeadTying::tied, "tied"}, {HeadTying::untied, "untied"}};
  return names;
}

struct EmbeddingMatrix {
  at::Tensor matrix;   // as stored: V x D, dtype preserved
  std::string input;   // the path as given
  std::string format;  // "ember", "safetensors", "safetensors (sharded)", "npy"
  std::string tensor;  // the tensor's name (ember: "<kind> input embedding" unless named)
  // For safetensors inferred from the names: a separate head (lm_head.weight, embed_out.weight,
  // output.weight) means untied.
  HeadTying head = HeadTying::unknown;
  std::string where() const { return input + (tensor.empty() ? "" : " [" + tensor + "]"); }
};

// Throws DataError / CheckpointError naming the input and what was expected.
EmbeddingMatrix load_embedding_matrix(const std::filesystem::path& input, const std::string& tensor = "");

// The name of the input-embedding tensor among `names` (known names first, then known suffixes);
// throws DataError naming `where` and suggesting --tensor when there is none.
std::string find_embedding_tensor(const std::vector<std::string>& names, const std::string& where);

}  // namespace ember
