// train.* keys: the loop itself.
#pragma once
#include <cstdint>
#include <string>

#include "ember/config/fields.h"

namespace ember {

enum class Precision { fp32, bf16 };  // bf16: autocast; master weights stay fp32
inline std::span<const EnumName<Precision>> enum_names(Precision) {
  static constexpr EnumName<Precision> names[] = {{Precision::fp32, "fp32"}, {Precision::bf16, "bf16"}};
  return names;
}
enum class OnNonfinite { stop, skip };  // skip: skip the optimizer step, count it
inline std::span<const EnumName<OnNonfinite>> enum_names(OnNonfinite) {
  static constexpr EnumName<OnNonfinite> names[] = {{OnNonfinite::stop, "stop"}, {OnNonfinite::skip, "skip"}};
  return names;
}
// train.activation_checkpointing: recompute blocks in backward instead of keeping their activations.
enum class ActivationCheckpointing { none, full, every_k };
inline std::span<const EnumName<ActivationCheckpointing>> enum_names(ActivationCheckpointing) {
  static constexpr EnumName<ActivationCheckpointing> names[] = {{ActivationCheckpointing::none, "none"},
                                                                {ActivationCheckpointing::full, "full"},
                                                                {ActivationCheckpointing::every_k, "every_k"}};
  return names;
}
enum class DeviceChoice { automatic, cpu, cuda };  // automatic: cuda when available
inline std::span<const EnumName<DeviceChoice>> enum_names(DeviceChoice) {
  static constexpr EnumName<DeviceChoice> names[] = {
      {DeviceChoice::automatic, "auto"}, {DeviceChoice::cpu, "cpu"}, {DeviceChoice::cuda, "cuda"}};
  return names;
}

struct TrainConfig {
  int64_t steps = 200;
  int64_t micro_batch = 16;
  int64_t seq_len = 128;
  int64_t grad_accum = 1;
  int64_t seed = 1234;
  Precision precision = Precision::fp32;
  OnNonfinite on_nonfinite = OnNonfinite::stop;
  // On a non-finite step, replay it under a trace and write where the first NaN / inf appeared,
  // with the batch, to <run>/nonfinite/step_<N>/ (train/nonfinite_report.h).
  bool debug_nonfinite = false;
  int64_t threads = 0;  // intra-op threads; 0 = LibTorch default
  DeviceChoice device = DeviceChoice::automatic;
  ActivationCheckpointing activation_checkpointing = ActivationCheckpointing::none;
  int64_t activation_checkpointing_k = 2;  // every_k: blocks 0, k, 2k, ... are recomputed

  void fields(FieldVisitor& v) {
    v.field("steps", steps, Bound::positive());
    v.field("micro_batch", micro_batch, Bound::positive());
    v.field("seq_len", seq_len, Bound::positive());
    v.field("grad_accum", grad_accum, Bound::positive());
    v.field("seed", seed, Bound::non_negative());
    v.choice("precision", precision);
    v.choice("on_nonfinite", on_nonfinite);
    v.field("debug_nonfinite", debug_nonfinite);
    v.field("threads", threads, Bound::non_negative());
    v.choice("device", device);
    v.choice("activation_checkpointing", activation_checkpointing);
    v.field("activation_checkpointing_k", activation_checkpointing_k, Bound::positive());
  }
  int64_t tokens_per_step() const { return micro_batch * seq_len * grad_accum; }
};

}  // namespace ember
