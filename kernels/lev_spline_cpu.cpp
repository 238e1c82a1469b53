// Fused CPU forward / backward of the LEV spline product, and the ATen reference.
#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <cmath>
#include <vector>

#include "kernels/lev_spline.h"
#include "kernels/lev_spline_cuda.h"
#include "kernels/lev_spline_math.h"
#include "ember/util/error.h"

namespace ember::lev {
namespace {

struct Shape {
  int64_t N, H, DS, K, R;
};

Shape shape_of(const at::Tensor& u, const at::Tensor& S) {
  if (u.dim() != 3 || S.dim() != 4 || u.size(1) != S.size(0) || u.size(2) != S.size(1))
    throw Error("lev spline: expected u [N, h, d_s] and S [h, d_s, kappa, r]");
  return {u.size(0), u.size(1), u.size(2), S.size(2), S.size(3)};
}

// The running product over d_s factors is kept as mantissa * 2^exponent (frexp every 8 factors),
// so 128 factors in [1e-9, 1e3] neither under- nor overflow before the final ldexp.
template <class T>
void forward_kernel(const T* u, const T* S, T* M, Shape s, bool normalize) {
  at::parallel_for(0, s.N * s.H, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> prod(s.R);
    std::vector<int> expo(s.R), negative(s.R);
    for (int64_t nl = begin; nl < end; ++nl) {
      const int64_t l = nl % s.H;
      std::fill(prod.begin(), prod.end(), 1.0);
      std::fill(expo.begin(), expo.end(), 0);
      std::fill(negative.begin(), negative.end(), 0);
      for (int64_t d = 0; d < s.DS; ++d) {
        const auto w = basis_window<T>(u[nl * s.DS + d], static_cast<int>(s.K), normalize);
        const T* row = S + ((l * s.DS + d) * s.K + w.first) * s.R;
        for (int64_t rho = 0; rho < s.R; ++rho) {
          T phi = 0;  // phi = sum_m B~_m(u) S[l, d, m, rho]  (step 5)
          for (int j = 0; j < w.count; ++j) phi += w.value[j] * row[j * s.R + rho];
          negative[rho] ^= phi < T(0);
          prod[rho] *= static_cast<double>(abs_eps(phi));
        }
        if (d % 8 == 7 || d == s.DS - 1)
          for (int64_t rho = 0; rho < s.R; ++rho) {
            int e = 0;
            prod[rho] = std::frexp(prod[rho], &e);
            expo[rho] += e;
          }
      }
      for (int64_t rho = 0; rho < s.R; ++rho)  // M = sign * prod_d (|phi_d| + 1e-9)  (step 6)
        M[nl * s.R + rho] = static_cast<T>((negative[rho] ? -1.0 : 1.0) * std::ldexp(prod[rho], expo[rho]));
    }
  });
}

// dM/dphi_d = M sign(phi_d) / (|phi_d| + 1e-9); parallel over (head, dim) so that the gradient of
// S[l, d] has a single writer; the basis is recomputed from u.
template <class T>
void backward_kernel(const T* gM, const T* M, const T* u, const T* S, T* gU, T* gS, Shape s, bool normalize) {
  at::parallel_for(0, s.H * s.DS, 1, [&](int64_t begin, int64_t end) {
    for (int64_t ld = begin; ld < end; ++ld) {
      const int64_t l = ld / s.DS, d = ld % s.DS;
      for (int64_t n = 0; n < s.N; ++n) {
        const int64_t nl = n * s.H + l;
        const auto w = basis_window<T>(u[nl * s.DS + d], static_cast<int>(s.K), normalize);
        const T* row = S + (ld * s.K + w.first) * s.R;
        T* grow = gS + (ld * s.K + w.first) * s.R;
        T gu = 0;
        for (int64_t rho = 0; rho < s.R; ++rho) {
          T phi = 0, dphi = 0;
          for (int j = 0; j < w.count; ++j) {
            phi += w.value[j] * row[j * s.R + rho];
            dphi += w.deriv[j] * row[j * s.R + rho];
          }
          const T g_phi = gM[nl * s.R + rho] * M[nl * s.R + rho] * (phi < T(0) ? T(-1) : T(1)) / abs_eps(phi);
          for (int j = 0; j < w.count; ++j) grow[j * s.R + rho] += w.value[j] * g_phi;
          gu += g_phi * dphi;
        }
        gU[nl * s.DS + d] = gu;
      }
    }
  });
}

class SplineProduct : public torch::autograd::Function<SplineProduct> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& u, const at::Tensor& S,
                            bool normalize) {
    at::Tensor m = u.is_cuda() ? spline_forward_cuda(u, S, normalize) : spline_forward_cpu(u, S, normalize);
    ctx->save_for_backward({u, S, m});
    ctx->saved_data["normalize"] = normalize;
    return m;
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    auto saved = ctx->get_saved_variables();
    const bool normalize = ctx->saved_data["normalize"].toBool();
    auto g = grads[0].contiguous();
    auto [gu, gs] = saved[0].is_cuda() ? spline_backward_cuda(g, saved[2], saved[0], saved[1], normalize)
                                       : spline_backward_cpu(g, saved[2], saved[0], saved[1], normalize);
    return {gu, gs, at::Tensor()};
  }
};

}  // namespace

at::Tensor spline_forward_cpu(const at::Tensor& u_in, const at::Tensor& S_in, bool normalize) {
  auto u = u_in.contiguous(), S = S_in.contiguous();
  const Shape s = shape_of(u, S);
  auto M = at::empty({s.N, s.H, s.R}, u.options());
  AT_DISPATCH_FLOATING_TYPES(u.scalar_type(), "lev_spline_forward", [&] {
    forward_kernel<scalar_t>(u.data_ptr<scalar_t>(), S.data_ptr<scalar_t>(), M.data_ptr<scalar_t>(), s, normalize);
  });
  return M;
}

std::pair<at::Tensor, at::Tensor> spline_backward_cpu(const at::Tensor& grad_m, const at::Tensor& m,
                                                      const at::Tensor& u_in, const at::Tensor& S_in, bool normalize) {
  auto u = u_in.contiguous(), S = S_in.contiguous(), gM = grad_m.contiguous(), M = m.contiguous();
  const Shape s = shape_of(u, S);
  auto gU = at::empty_like(u), gS = at::zeros_like(S);
  AT_DISPATCH_FLOATING_TYPES(u.scalar_type(), "lev_spline_backward", [&] {
    backward_kernel<scalar_t>(gM.data_ptr<scalar_t>(), M.data_ptr<scalar_t>(), u.data_ptr<scalar_t>(),
                              S.data_ptr<scalar_t>(), gU.data_ptr<scalar_t>(), gS.data_ptr<scalar_t>(), s, normalize);
  });
  return {gU, gS};
}

at::Tensor spline_product(const at::Tensor& u, const at::Tensor& S, bool normalize) {
  if (u.scalar_type() != S.scalar_type())
    throw Error("lev spline: u and S must share a dtype (fp32 or fp64)");
  return SplineProduct::apply(u, S, normalize);
}

at::Tensor spline_product_reference(const at::Tensor& u, const at::Tensor& S, bool normalize,
                                    const at::Tensor& knot_scale) {
  const int64_t K = S.size(2);
  auto grid = at::arange(K, u.options()) / static_cast<double>(K - 1);             // g_m = m / (kappa - 1)
  auto dist = (u.unsqueeze(-1) - grid).abs();                                       // [N, h, d_s, kappa]
  auto t = knot_scale.defined() ? dist * knot_scale.unsqueeze(-1) : dist * static_cast<double>(K - 1);
  auto B = at::where(t < 0.5, 0.75 - t * t, at::where(t < 1.5, 0.5 * (1.5 - t) * (1.5 - t), at::zeros_like(t)));
  if (normalize) B = B / B.sum(-1, true);                                           // partition of unity
  auto phi = at::einsum("nhdk,hdkr->nhdr", {B, S});                                 // step 5
  auto log_abs = (phi.abs() + kLogEps).log().sum(2);                                // step 6, in log space
  auto negatives = (phi < 0).sum(2).remainder(2);
  return (1 - 2 * negatives).to(u.scalar_type()) * log_abs.exp();
}

}  // namespace ember::lev
