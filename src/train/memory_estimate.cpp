#include "ember/train/memory_estimate.h"

#include <algorithm>

#include "ember/model/init.h"
#include "ember/model/lm.h"
#include "ember/kernels/kernel_choice.h"
#include "kernels/xent.h"

namespace ember {
namespace {

double matmul_parameters(LanguageModel& model) {
  double n = 0;
  for (const auto& p : model.parameters())
    if (p.dim() >= 2) n += static_cast<double>(p.numel());
  return n;
}

bool recomputed(const MemoryOptions& o, int64_t layer) {
  return o.checkpointing == ActivationCheckpointing::full ||
         (o.checkpointing == ActivationCheckpointing::every_k && layer % std::max<int64_t>(o.checkpointing_k, 1) == 0);
}

}  // namespace

MemoryEstimate estimate_training_memory(const ModelConfig& cfg, const MemoryOptions& o) {
  MetaInitScope meta;  // shapes only
  // `auto` stacks the projections on a GPU only (ember/kernels/kernel_choice.h): what each block
  // keeps of its input depends on it (kernels/projections.h)
  const bool auto_stacks = kernels::path(kernels::Op::projections) == kernels::Path::automatic;
  const kernels::ScopedPath stacking(kernels::Op::projections, auto_stacks ? (o.gpu ? kernels::Path::fused : kernels::Path::aten)
                                                                           : kernels::path(kernels::Op::projections));
  LanguageModel model(cfg);
  const double P = static_cast<double>(model.num_parameters());
  const double tokens = static_cast<double>(o.micro_batch * o.seq_len), d = static_cast<double>(cfg.d_model);
  const bool bf16 = o.precision == Precision::bf16;
  const int64_t elem = bf16 ? 2 : 4;
  MemoryEstimate m;
  m.parameters = 4 * P;  // fp32 master weights
  m.gradients = 4 * P;
  m.optimizer = 8 * P / static_cast<double>(o.zero >= 1 ? std::max<int64_t>(o.world, 1) : 1);  // exp_avg, exp_avg_sq
  m.autocast_copies = bf16 ? 2 * matmul_parameters(model) : 0.0;
  if (o.world > 1)  // each bucket holds its gradients and one slot per parameter (dist/grad_reducer.cpp)
    m.gradient_buckets = (o.grad_comm_bf16 ? 2.0 : 4.0) * (P + static_cast<double>(model.parameters().size()));
  double kept = 0, largest = 0, all = 0;
  const auto& blocks = model.blocks();
  for (size_t l = 0; l < blocks.size(); ++l) {
    const double block = blocks[l]->activation_bytes_per_token(elem);
    all += block;
    largest = std::max(largest, block);
    // a checkpointed block keeps its input: the fp32 stream and, after the first block, the addition
    // still pending on it (model/lm.h), in the activations' dtype
    const double input = 4 * d + (l > 0 ? static_cast<double>(elem) * d : 0.0);
    kept += recomputed(o, static_cast<int64_t>(l)) ? input : block;
  }
  kept += largest;  // backward's transient: a block's activation gradients beside what is kept
  if (o.checkpointing != ActivationCheckpointing::none) kept += largest;  // the one rebuilt in backward
  m.activations_per_block_token = blocks.empty() ? 0 : all / static_cast<double>(blocks.size());
  m.activations = tokens * (kept + 8 * d);  // + the final RMSNorm's input and output
  const double V = static_cast<double>(cfg.vocab_size);
  const bool fused = kernels::path(kernels::Op::loss_head) != kernels::Path::aten;
  // a chunk's rows (kernels/xent.h): of logits in the matmul dtype with the fused pass on
  // a GPU, of fp32 logits otherwise
  const int64_t bytes = fused && o.gpu ? static_cast<int64_t>(elem) : 4;
  const int64_t most = xent::chunk_rows(cfg.vocab_size, xent::chunk_budget_bytes(o.gpu), bytes);
  const double chunk = static_cast<double>(xent::balanced_chunk_rows(o.micro_batch * o.seq_len, most));
  if (fused) {
    // dL/dh in the matmul dtype and in fp32, dL/dW in fp32, one chunk of logits turned into their
    // gradient in place, and on a CPU in bf16 the weight-gradient product before it is added to fp32
    const double cpu_bf16_product = !o.gpu && elem != 4 ? V * d * elem : 0;
    m.loss = tokens * d * (elem + (elem != 4 ? 4 : 0)) + 4 * V * d + chunk * V * elem + cpu_bf16_product;
  } else {
    // dL/dh, dL/dW, and one chunk's logits with their softmax and low-precision copy (kernels.loss_head = aten)
    m.loss = tokens * d * elem + 4 * V * d + chunk * V * (8 + elem);
  }
  return m;
}

nlohmann::json MemoryEstimate::to_json() const {
  return {{"parameters", parameters},
          {"gradients", gradients},
          {"optimizer", optimizer},
          {"autocast_copies", autocast_copies},
          {"gradient_buckets", gradient_buckets},
          {"activations", activations},
          {"loss", loss},
          {"total", total()},
          {"activations_per_block_token", activations_per_block_token}};
}

}  // namespace ember
