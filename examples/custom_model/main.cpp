// A custom model from ember's pieces: LEV embedding, a tapered stack of SwiGLU MLPs, a mixer from
// the registry in each block; trained a few steps with ember's AdamW, lr schedule and clipping on
// a synthetic task (each token is the previous one + 1 mod V). Prints the loss; exits non-zero
// when the last losses are not below the first.
#include <ember/model/lev.h>
#include <ember/model/mixer_registry.h>
#include <ember/model/mlp.h>
#include <ember/model/norm.h>
#include <ember/model/taper.h>
#include <ember/train/adamw.h>
#include <ember/train/lr_schedule.h>

#include <cmath>
#include <cstdio>

struct TaperedLevLM : torch::nn::Module {
  explicit TaperedLevLM(const ember::ModelConfig& cfg) : cfg(cfg), rope(cfg.head_dim(), cfg.max_seq_len, 10000.0) {
    ember::LevConfig lev;
    lev.k = 2, lev.d_seed = 16, lev.heads = 2, lev.knots = 8, lev.rank = 8;
    embed = register_module("embed", std::make_shared<ember::LevEmbedding>(cfg.vocab_size, cfg.d_model, lev));
    const auto widths = ember::taper_widths(cfg.mlp.taper, cfg.n_layers, cfg.base_d_ff());
    for (int64_t l = 0; l < cfg.n_layers; ++l) {
      const auto s = std::to_string(l);
      norms.push_back(register_module("norm_a" + s, std::make_shared<ember::RMSNorm>(cfg.d_model, cfg.norm_eps)));
      mixers.push_back(register_module("mixer" + s, ember::make_mixer(ember::mixer_context(cfg, l))));
      norms.push_back(register_module("norm_b" + s, std::make_shared<ember::RMSNorm>(cfg.d_model, cfg.norm_eps)));
      mlps.push_back(register_module("mlp" + s, std::make_shared<ember::SwiGLU>(cfg.d_model, widths[l], 0.02, 0.02)));
      std::printf("layer %ld: mixer %s, d_ff %ld\n", static_cast<long>(l), cfg.mixer.kind.c_str(),
                  static_cast<long>(widths[l]));
    }
    final_norm = register_module("final_norm", std::make_shared<ember::RMSNorm>(cfg.d_model, cfg.norm_eps));
    head = register_parameter("head", at::randn({cfg.vocab_size, cfg.d_model}) * 0.02);
  }
  at::Tensor loss(const at::Tensor& ids, const at::Tensor& targets) {
    at::Tensor x = embed->forward(ids);
    for (size_t l = 0; l < mixers.size(); ++l) {
      x = x + mixers[l]->forward(norms[2 * l]->forward(x), rope);
      x = x + mlps[l]->forward(norms[2 * l + 1]->forward(x));
    }
    const at::Tensor logits = at::matmul(final_norm->forward(x), head.t());
    return at::cross_entropy_loss(logits.reshape({-1, cfg.vocab_size}), targets.reshape({-1}));
  }
  ember::ModelConfig cfg;
  ember::Rope rope;
  std::shared_ptr<ember::LevEmbedding> embed;
  std::vector<std::shared_ptr<ember::RMSNorm>> norms;
  std::vector<std::shared_ptr<ember::Mixer>> mixers;
  std::vector<std::shared_ptr<ember::SwiGLU>> mlps;
  std::shared_ptr<ember::RMSNorm> final_norm;
  at::Tensor head;
};

int main() {
  at::manual_seed(0);
  ember::ModelConfig cfg;
  cfg.vocab_size = 64, cfg.d_model = 64, cfg.n_layers = 4, cfg.n_heads = 4, cfg.max_seq_len = 32;
  cfg.mixer.kind = "attention";
  cfg.mlp.d_ff = 128;
  cfg.mlp.taper.schedule = ember::TaperSchedule::linear;  // 192 ... 64: the uniform stack's budget
  TaperedLevLM model(cfg);

  ember::NamedParameters params;
  for (const auto& p : model.named_parameters()) params.emplace_back(p.key(), p.value());
  ember::OptimConfig optim;
  optim.lr = 1e-2, optim.min_lr = 1e-3, optim.warmup_steps = 5;
  ember::AdamW adamw(params, optim);
  std::vector<at::Tensor> tensors;
  for (const auto& [name, p] : params) tensors.push_back(p);

  const int64_t steps = 40, batch = 16, seq = 32;
  double first = 0, last = 0;
  for (int64_t step = 0; step < steps; ++step) {
    const at::Tensor start = at::randint(cfg.vocab_size, {batch, 1}, at::kLong);
    const at::Tensor seqs = (start + at::arange(seq + 1, at::kLong)).remainder(cfg.vocab_size);
    const at::Tensor ids = seqs.narrow(1, 0, seq), targets = seqs.narrow(1, 1, seq);
    const at::Tensor loss = model.loss(ids, targets);
    loss.backward();
    ember::clip_grad_norm(tensors, optim.grad_clip);
    adamw.step(ember::learning_rate(optim, step, steps));
    adamw.zero_grad();
    const double value = loss.item<double>();
    if (step < 5) first += value / 5;
    if (step >= steps - 5) last += value / 5;
    std::printf("step %2ld  loss %.4f\n", static_cast<long>(step), value);
  }
  std::printf("mean loss: first 5 steps %.4f, last 5 steps %.4f (ln V = %.4f)\n", first, last,
              std::log(static_cast<double>(cfg.vocab_size)));
  if (!(last < 0.5 * first)) {
    std::fprintf(stderr, "custom_model: the loss did not fall to half (%.4f -> %.4f)\n", first, last);
    return 1;
  }
  return 0;
}
