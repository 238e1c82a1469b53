// A device-clean model: every tensor a module uses is a parameter, a buffer or made on its input's
// device, so the whole model runs forward and backward on the meta device (shapes only, no data),
// for every embedding kind x mixer of the registries. A tensor left on the CPU would fail there.
// Also: RoPE tables follow the input's device and dtype (fp64 inputs rotate in fp64).
#include <gtest/gtest.h>
#include <torch/library.h>
#include <torch/torch.h>

#include "attention_impl.h"
#include "ember/model/embedding_registry.h"
#include "ember/model/init.h"
#include "ember/model/lev.h"
#include "ember/model/lm.h"
#include "ember/model/mixer_registry.h"
#include "ember/model/mixers/hope_attention.h"
#include "ember/model/rope.h"

// LibTorch's C++ build lacks Meta kernels for a few operators that Python gets from its own meta
// registrations; these shape-only ones stand in for them in this test executable.
TORCH_LIBRARY_IMPL(aten, Meta, m) {
  m.impl("index_select", [](const at::Tensor& self, int64_t dim, const at::Tensor& index) {
    auto sizes = self.sizes().vec();
    sizes[static_cast<size_t>(at::maybe_wrap_dim(dim, self.dim()))] = index.numel();
    return at::empty(sizes, self.options());
  });
  m.impl("where.self", [](const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other) {
    const auto sizes = at::infer_size(at::infer_size(condition.sizes(), self.sizes()), other.sizes());
    return at::empty(sizes, self.options().dtype(at::promote_types(self.scalar_type(), other.scalar_type())));
  });
  m.impl("where.self_out",
         [](const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other, at::Tensor& out) -> at::Tensor& {
           out.resize_(at::infer_size(at::infer_size(condition.sizes(), self.sizes()), other.sizes()));
           return out;
         });
  m.impl("embedding_dense_backward", [](const at::Tensor& grad, const at::Tensor& indices, c10::SymInt num_weights,
                                        c10::SymInt padding_idx, bool scale_grad_by_freq) {
    return at::empty({num_weights.expect_int(), grad.size(-1)}, grad.options());
  });
}

TEST(DeviceClean, EveryEmbeddingKindAndMixerRunsForwardAndBackwardOnTheMetaDevice) {
  int pairs = 0;
  for (const auto& embedding : ember::embedding_kinds()) {
    for (const auto& mixer : ember::mixer_kinds()) {
      ember::ModelConfig c;
      c.vocab_size = 300, c.d_model = 32, c.n_layers = 2, c.n_heads = 4, c.n_kv_heads = 2, c.max_seq_len = 16;
      c.mlp.d_ff = 64;
      c.embedding.kind = embedding.name;
      c.mixer.kind = mixer.name;
      auto& lev = c.embedding.get<ember::LevConfig>();
      lev.d_seed = 8, lev.heads = 2, lev.knots = 5, lev.rank = 4;
      auto& hope = c.mixer.get<ember::HopeAttentionConfig>();  // levels learning in context
      hope.update = ember::CmsUpdate::chunked, hope.chunk_sizes = {2, 3, 0, 5};
      hope.signal = (pairs / static_cast<int>(ember::mixer_kinds().size())) % 2 == 0 ? ember::TeachSource::two_pass
                                                                                       : ember::TeachSource::lens;
      ember::MetaInitScope meta;
      ember::LanguageModel m(c);
      m.set_activation_checkpointing(ember::ActivationCheckpointing::every_k, 2);
      ember::testing::set_attention_impl(m, ember::AttentionImpl::reference);  // SDPA's decomposition has no C++ meta kernels
      auto ids = torch::empty({2, 12}, torch::TensorOptions(torch::kLong).device(torch::kMeta));
      const std::string what = embedding.name + " x " + mixer.name;
      at::Tensor loss;
      try {
        loss = m.loss(ids, ids);
      } catch (const std::exception& e) {
        FAIL() << what << ": " << std::string(e.what()).substr(0, 300);
      }
      EXPECT_TRUE(loss.is_meta()) << what;
      try {
        loss.backward();
      } catch (const std::exception& e) {
        FAIL() << what << " (backward): " << std::string(e.what()).substr(0, 300);
      }
      for (const auto& p : m.named_parameters()) {
        ASSERT_TRUE(p.value().grad().defined()) << what << " " << p.key();
        EXPECT_TRUE(p.value().grad().is_meta()) << what << " " << p.key();
      }
      EXPECT_TRUE(m.forward(ids).is_meta()) << what;
      ++pairs;
    }
  }
  EXPECT_EQ(pairs, static_cast<int>(ember::embedding_kinds().size() * ember::mixer_kinds().size()));
}

TEST(DeviceClean, RopeTablesFollowTheInputsDeviceAndDtype) {
  ember::Rope rope(8, 16, 10000.0);
  auto x64 = torch::randn({1, 2, 5, 8}, torch::kDouble);
  auto y = rope.apply(x64, 3);
  EXPECT_EQ(y.scalar_type(), at::kDouble);
  // position p rotates pair i by p base^(-2i/d): check one entry against the closed form in fp64
  const double theta = 4.0 * std::pow(10000.0, -2.0 * 1 / 8.0);  // p = 3 + 1, i = 1
  const double a = x64[0][0][1][1].item<double>(), b = x64[0][0][1][5].item<double>();
  EXPECT_NEAR(y[0][0][1][1].item<double>(), a * std::cos(theta) - b * std::sin(theta), 1e-14);
  EXPECT_NEAR(y[0][0][1][5].item<double>(), b * std::cos(theta) + a * std::sin(theta), 1e-14);
  auto bf = torch::randn({1, 2, 5, 8}).to(torch::kBFloat16);
  auto r = rope.apply(bf);
  EXPECT_EQ(r.scalar_type(), at::kFloat);  // the rotation runs in fp32, as in Python
  EXPECT_TRUE(torch::allclose(r, rope.apply(bf.to(torch::kFloat))));
  auto meta = torch::empty({1, 2, 5, 8}, torch::TensorOptions().device(torch::kMeta));
  EXPECT_TRUE(rope.apply(meta).is_meta());
}
