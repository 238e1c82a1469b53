// ember's model <-> Hugging Face's Llama: the config.json keys and the tensor names.
// An attention model with one MLP width is a LlamaForCausalLM; per-layer widths (tapering) and the
// gate of gated attention need ember's small modeling_ember.py (EmberForCausalLM, loaded with
// trust_remote_code); the other mixers have no transformers counterpart and are refused by name.
// Every embedding kind exports its materialised V x D input table (docs/interop.md).
#pragma once
#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "ember/io/safetensors.h"
#include "ember/model/lm.h"

namespace ember {

// How a model maps onto transformers' classes.
struct HfArchitecture {
  std::vector<int64_t> mlp_widths;     // per layer
  std::string attention_gate = "none";  // none | elementwise | headwise
  bool tied = false;                   // the head is the input table (tie_word_embeddings)
  bool remote_code() const;            // EmberForCausalLM rather than LlamaForCausalLM
  std::string class_name() const;
};

// A UsageError naming what does not fit (the mixer kind, a CMS chain) when the model cannot be
// exported.
HfArchitecture hf_architecture(LanguageModel& model);

// config.json: Llama's keys, `intermediate_sizes` / `attention_gate` / `auto_map` for the
// remote-code class, and `ember` (the embedding kind and its options, the source, the step).
nlohmann::json hf_config_json(const ModelConfig& m, const HfArchitecture& arch, at::ScalarType dtype,
                              const nlohmann::json& ember_section);

// The model's tensors under transformers' names, as `dtype`: the materialised input table as
// model.embed_tokens, the head (times embedding.output_scale) as lm_head unless tied.
TensorMap hf_tensors(LanguageModel& model, const HfArchitecture& arch, at::ScalarType dtype);

// The ember model a Llama config.json describes; `where` names the file in errors. Anything ember
// would load wrongly (another architecture, RoPE scaling, biases, another activation, a head_dim
// that is not hidden / heads) is a CheckpointError naming the key.
ModelConfig model_config_from_hf(const nlohmann::json& config, const std::string& where);

// transformers' tensor name of an ember parameter (model.layers.3.mlp.up_proj.weight for
// layers.3.mlp.w_up); a CheckpointError for a parameter that has none.
std::string hf_tensor_name(const std::string& ember_name);

// Copies transformers' tensors (fp32, fp16 or bf16) into the parameters of `model` (a tied or
// untied table): a missing, unexpected or mis-shaped tensor is a CheckpointError naming it and
// `where`; RoPE's inv_freq buffers that old checkpoints carry are ignored.
void load_hf_tensors(LanguageModel& model, const TensorMap& hf, const std::string& where);

}  // namespace ember
