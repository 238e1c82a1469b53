#include "ember/interop/hf_llama.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <regex>
#include <set>
#include <type_traits>

#include "ember/run/parameters.h"
#include "ember/run/run_config.h"
#include "ember/config/enum_names.h"
#include "ember/config/json_writer.h"
#include "ember/model/feed_forward_registry.h"
#include "ember/model/mixer_registry.h"
#include "ember/model/mixers/attention.h"
#include "ember/util/error.h"

namespace ember {

bool HfArchitecture::remote_code() const {
  for (int64_t w : mlp_widths)
    if (w != mlp_widths.front()) return true;
  return attention_gate != "none";
}

std::string HfArchitecture::class_name() const { return remote_code() ? "EmberForCausalLM" : "LlamaForCausalLM"; }

namespace {

std::string exportable_mixers() {  // "attention and gated_attention"
  std::vector<std::string> names;
  for (const auto& k : mixer_kinds())
    if (k.attention_gate) names.push_back(k.name);
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

}  // namespace

HfArchitecture hf_architecture(LanguageModel& model) {
  const ModelConfig& m = model.config();
  HfArchitecture arch;
  const auto& kind = mixer_kind(m.mixer.kind);
  if (!kind.attention_gate)
    throw UsageError("export hf: mixer '" + m.mixer.kind + "' has no transformers counterpart (" +
                     exportable_mixers() + " models export)");
  arch.attention_gate = kind.attention_gate(mixer_context(m, 0));
  for (auto& block : model.blocks()) {
    if (block->mlps().size() != 1 || block->chain().teach_needs().any())
      throw UsageError("export hf: feed-forward '" + feed_forward_choice(m).config.kind +
                       "' (a chain of MLPs, or one that learns in context) has no transformers counterpart");
    arch.mlp_widths.push_back(block->mlp_width());
  }
  arch.tied = model.embedding().tied_table().defined() && m.embedding.output_scale == 1.0;
  return arch;
}

namespace {

// transformers' rope_parameters: the base and, for llama3, the scaling's four numbers.
nlohmann::json rope_parameters(const MixerConfig& mixer) {
  const auto& s = mixer.rope_scaling;
  if (s.type == RopeScalingType::none) return {{"rope_type", "default"}, {"rope_theta", mixer.rope_base}};
  return {{"rope_type", "llama3"},
          {"rope_theta", mixer.rope_base},
          {"factor", s.factor},
          {"low_freq_factor", s.low_freq_factor},
          {"high_freq_factor", s.high_freq_factor},
          {"original_max_position_embeddings", s.original_max_seq_len}};
}

}  // namespace

nlohmann::json hf_config_json(const ModelConfig& m, const HfArchitecture& arch, at::ScalarType dtype,
                              const nlohmann::json& ember_section) {
  const std::string dtype_name = dtype == at::kBFloat16 ? "bfloat16" : "float32";
  nlohmann::json c = {
      {"architectures", {arch.class_name()}},
      {"model_type", "llama"},
      {"vocab_size", m.vocab_size},
      {"hidden_size", m.d_model},
      {"intermediate_size", *std::max_element(arch.mlp_widths.begin(), arch.mlp_widths.end())},
      {"num_hidden_layers", m.n_layers},
      {"num_attention_heads", m.n_heads},
      {"num_key_value_heads", m.kv_heads()},
      {"head_dim", m.head_dim()},
      {"hidden_act", "silu"},
      {"max_position_embeddings", m.max_seq_len},
      {"rms_norm_eps", m.norm_eps},
      {"rope_theta", m.mixer.rope_base},
      {"rope_parameters", rope_parameters(m.mixer)},
      {"initializer_range", m.init_std},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"mlp_bias", false},
      {"pretraining_tp", 1},
      {"tie_word_embeddings", arch.tied},
      {"use_cache", true},
      {"torch_dtype", dtype_name},
      {"dtype", dtype_name},
      {"ember", ember_section},
  };
  if (m.mixer.rope_scaling.type != RopeScalingType::none)  // also the key transformers 4 and its readers know
    c["rope_scaling"] = rope_parameters(m.mixer);
  if (arch.remote_code()) {
    c["intermediate_sizes"] = arch.mlp_widths;
    c["attention_gate"] = arch.attention_gate;
    c["auto_map"] = {{"AutoModelForCausalLM", "modeling_ember.EmberForCausalLM"}};
  }
  return c;
}

std::string hf_tensor_name(const std::string& ember_name) {
  static const std::vector<std::pair<std::string, std::string>> per_layer = {
      {"mixer_norm.weight", "input_layernorm.weight"},
      {"mlp_norm.weight", "post_attention_layernorm.weight"},
      {"mixer.wq", "self_attn.q_proj.weight"},
      {"mixer.wk", "self_attn.k_proj.weight"},
      {"mixer.wv", "self_attn.v_proj.weight"},
      {"mixer.wo", "self_attn.o_proj.weight"},
      {"mixer.wg", "self_attn.gate_proj.weight"},
      {"mlp.w_gate", "mlp.gate_proj.weight"},
      {"mlp.w_up", "mlp.up_proj.weight"},
      {"mlp.w_down", "mlp.down_proj.weight"}};
  if (ember_name == "embedding.weight") return "model.embed_tokens.weight";
  if (ember_name == "head.weight") return "lm_head.weight";
  if (ember_name == "final_norm.weight") return "model.norm.weight";
  static const std::regex layer(R"(layers\.(\d+)\.(.+))");
  std::smatch match;
  if (std::regex_match(ember_name, match, layer))
    for (const auto& [ours, theirs] : per_layer)
      if (match[2] == ours) return "model.layers." + match[1].str() + "." + theirs;
  throw CheckpointError("parameter '" + ember_name + "' has no counterpart in transformers' Llama");
}

TensorMap hf_tensors(LanguageModel& model, const HfArchitecture& arch, at::ScalarType dtype) {
  at::NoGradGuard no_grad;
  TensorMap out;
  for (const auto& [name, t] : module_tensors(model))
    if (name.rfind("embedding.", 0) != 0 && name != "head.weight") out[hf_tensor_name(name)] = t.to(dtype).contiguous();
  out["model.embed_tokens.weight"] = model.embedding().materialize().to(dtype).contiguous();
  if (!arch.tied)  // logits = s h W^T: the scale folds into the head
    out["lm_head.weight"] = (model.head_weight() * model.config().embedding.output_scale).to(dtype).contiguous();
  return out;
}

namespace {

// A config.json value, or a CheckpointError naming the key.
template <class T>
T required(const nlohmann::json& c, const char* key, const std::string& where) {
  if (!c.contains(key) || c[key].is_null()) throw CheckpointError(where + ": no '" + key + "'");
  // nlohmann would truncate 2048.5 to an integer (and 1e300 overflows): a count must be written as one.
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    if (!c[key].is_number_integer())
      throw CheckpointError(where + ": '" + key + "' is not an integer (" + c[key].dump() + ")");
  try {
    return c[key].get<T>();
  } catch (const nlohmann::json::exception&) {
    throw CheckpointError(where + ": '" + key + "' has the wrong type (" + c[key].dump() + ")");
  }
}

// An optional config.json value: `fallback` when absent or null, else the value, or a
// CheckpointError naming the key when it has another type ("model_type": 36).
template <class T>
T optional(const nlohmann::json& c, const char* key, T fallback, const std::string& where) {
  if (!c.is_object()) throw CheckpointError(where + ": expected a JSON object, found " + c.dump());
  if (!c.contains(key) || c[key].is_null()) return fallback;
  return required<T>(c, key, where);
}

void refuse_unless(bool ok, const std::string& where, const std::string& what) {
  if (!ok) throw CheckpointError(where + ": " + what + "; ember cannot load it without changing the model");
}

// RoPE's base and scaling from rope_parameters (transformers 5) or rope_scaling (config.json of
// transformers 4, e.g. Llama 3.1 / 3.2) beside a top-level rope_theta. `default` and `llama3` load.
void read_rope(const nlohmann::json& c, const std::string& where, double& base, RopeScalingConfig& scaling) {
  base = optional(c, "rope_theta", 10000.0, where);
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    if (!c.contains(key) || c[key].is_null()) continue;
    const auto& r = c[key];
    const std::string at = where + " " + key;
    const std::string type = optional(r, "rope_type", optional(r, "type", std::string("default"), at), at);
    refuse_unless(type == "default" || type == "llama3", where,
                  fmt::format("{} type '{}' (RoPE scaling) is not supported (default and llama3 are)", key, type));
    if (r.contains("rope_theta")) base = required<double>(r, "rope_theta", at);
    if (type != "llama3") continue;
    scaling.type = RopeScalingType::llama3;
    scaling.factor = required<double>(r, "factor", at);
    scaling.low_freq_factor = required<double>(r, "low_freq_factor", at);
    scaling.high_freq_factor = required<double>(r, "high_freq_factor", at);
    scaling.original_max_seq_len = required<int64_t>(r, "original_max_position_embeddings", at);
    refuse_unless(scaling.factor > 0 && scaling.high_freq_factor > scaling.low_freq_factor &&
                      scaling.low_freq_factor > 0 && scaling.original_max_seq_len > 0,
                  where, fmt::format("{} has llama3 parameters ember cannot use ({})", key, r.dump()));
  }
}

void check_architecture(const nlohmann::json& c, const std::string& where) {
  const std::string type = optional(c, "model_type", std::string(), where);
  refuse_unless(type == "llama", where, "model_type '" + type + "' is not supported (ember imports Llama)");
  if (c.contains("architectures") && c["architectures"].is_array())
    for (const auto& a : c["architectures"])
      refuse_unless(a == "LlamaForCausalLM" || a == "EmberForCausalLM", where,
                    "architecture " + a.dump() + " is not supported (ember imports LlamaForCausalLM)");
  const std::string act = optional(c, "hidden_act", std::string("silu"), where);
  refuse_unless(act == "silu", where, "hidden_act '" + act + "' is not SiLU");
  refuse_unless(!optional(c, "attention_bias", false, where), where, "attention_bias is true (ember has no biases)");
  refuse_unless(!optional(c, "mlp_bias", false, where), where, "mlp_bias is true (ember has no biases)");
}

// The model section ember wrote at export (keeps the mixer and the taper), with the input side made
// a plain table: the exported model.embed_tokens is the materialised table.
ModelConfig ember_model_section(const nlohmann::json& c, const std::string& where) {
  const auto& model = c["ember"]["model"];
  const int64_t seq_len = optional(model, "max_seq_len", int64_t{1}, where + " ember.model");  // train.seq_len may not exceed it
  ModelConfig m = parse_config_text(fmt::format("model: {}\ntrain: {{seq_len: {}}}\n", model.dump(), seq_len),
                                    where + " (key ember.model)")
                      .model;
  m.embedding.kind = optional(c, "tie_word_embeddings", false, where) ? "tied" : "untied";
  m.embedding.output_scale = 1.0;
  return m;
}

// The chassis from Llama's keys.
ModelConfig llama_model(const nlohmann::json& c, const std::string& where) {
  refuse_unless(!c.contains("intermediate_sizes") || c["intermediate_sizes"].is_null(), where,
                "per-layer intermediate_sizes without ember's model section");
  refuse_unless(optional(c, "attention_gate", std::string("none"), where) == "none", where,
                "an attention gate without ember's model section");
  ModelConfig m;
  m.mlp.d_ff = required<int64_t>(c, "intermediate_size", where);
  m.embedding.kind = optional(c, "tie_word_embeddings", false, where) ? "tied" : "untied";
  m.mixer.kind = "attention";
  return m;
}

}  // namespace

ModelConfig model_config_from_hf(const nlohmann::json& c, const std::string& where) {
  check_architecture(c, where);
  const bool ours = c.contains("ember") && c["ember"].is_object() && c["ember"].contains("model");
  ModelConfig m = ours ? ember_model_section(c, where) : llama_model(c, where);
  const auto set = [&](const char* key, auto& field, auto value) {
    if (ours && field != value)
      throw CheckpointError(where + ": '" + key + "' = " + nlohmann::json(value).dump() +
                            " disagrees with ember.model (" + nlohmann::json(field).dump() + ")");
    field = value;
  };
  set("vocab_size", m.vocab_size, required<int64_t>(c, "vocab_size", where));
  set("hidden_size", m.d_model, required<int64_t>(c, "hidden_size", where));
  set("num_hidden_layers", m.n_layers, required<int64_t>(c, "num_hidden_layers", where));
  set("num_attention_heads", m.n_heads, required<int64_t>(c, "num_attention_heads", where));
  const bool has_kv = c.contains("num_key_value_heads") && !c["num_key_value_heads"].is_null();
  const int64_t kv = has_kv ? required<int64_t>(c, "num_key_value_heads", where) : m.n_heads;
  if (ours && kv != m.kv_heads())
    throw CheckpointError(
        fmt::format("{}: 'num_key_value_heads' = {} disagrees with ember.model ({})", where, kv, m.kv_heads()));
  m.n_kv_heads = kv == m.n_heads ? 0 : kv;
  set("max_position_embeddings", m.max_seq_len, optional(c, "max_position_embeddings", m.max_seq_len, where));
  set("rms_norm_eps", m.norm_eps, optional(c, "rms_norm_eps", m.norm_eps, where));
  double base = 0;
  RopeScalingConfig scaling;
  read_rope(c, where, base, scaling);
  set("rope_theta", m.mixer.rope_base, base);
  if (ours && m.mixer.rope_scaling.type != scaling.type)
    throw CheckpointError(fmt::format("{}: RoPE scaling '{}' disagrees with ember.model ('{}')", where,
                                      enum_name(scaling.type), enum_name(m.mixer.rope_scaling.type)));
  m.mixer.rope_scaling.type = scaling.type;
  if (scaling.type == RopeScalingType::llama3) {
    set("rope_scaling.factor", m.mixer.rope_scaling.factor, scaling.factor);
    set("rope_scaling.low_freq_factor", m.mixer.rope_scaling.low_freq_factor, scaling.low_freq_factor);
    set("rope_scaling.high_freq_factor", m.mixer.rope_scaling.high_freq_factor, scaling.high_freq_factor);
    set("rope_scaling.original_max_position_embeddings", m.mixer.rope_scaling.original_max_seq_len,
        scaling.original_max_seq_len);
  }
  m.init_std = optional(c, "initializer_range", m.init_std, where);
  if (c.contains("head_dim") && !c["head_dim"].is_null())
    refuse_unless(required<int64_t>(c, "head_dim", where) * m.n_heads == m.d_model, where,
                  fmt::format("head_dim {} is not hidden_size / num_attention_heads ({})", c["head_dim"].dump(),
                              m.d_model / std::max<int64_t>(m.n_heads, 1)));
  return m;
}

void load_hf_tensors(LanguageModel& model, const TensorMap& hf, const std::string& where) {
  at::NoGradGuard no_grad;
  std::set<std::string> used;
  for (auto& item : model.named_parameters()) {
    const std::string& name = item.key();
    at::Tensor& param = item.value();
    const std::string theirs = hf_tensor_name(name);
    auto it = hf.find(theirs);
    if (it == hf.end()) throw CheckpointError(where + ": tensor '" + theirs + "' is missing");
    const at::Tensor& t = it->second;
    if (t.sizes() != param.sizes())
      throw CheckpointError(fmt::format("{}: tensor '{}' has shape {}, the config needs {}", where, theirs,
                                        fmt::join(t.sizes(), "x"), fmt::join(param.sizes(), "x")));
    if (!at::isFloatingType(t.scalar_type()))
      throw CheckpointError(where + ": tensor '" + theirs + "' is not floating point");
    param.copy_(t);
    used.insert(theirs);
  }
  for (const auto& [name, t] : hf) {
    const bool tied_head = name == "lm_head.weight" && model.embedding().tied_table().defined();
    if (!used.count(name) && !tied_head && name.find("rotary_emb.inv_freq") == std::string::npos)
      throw CheckpointError(where + ": unexpected tensor '" + name + "' (not part of the configured model)");
  }
}

}  // namespace ember
