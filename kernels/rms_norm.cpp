// RMSNorm with its residual add (kernels/rms_norm.h): the autograd functions, the choice between
// the fused pass and ATen's ops, and the passes: checks, then the CPU loops over rows split across
// threads or one launch of the CUDA kernel on the current stream. Each pass is an op to the
// observers of ATen's ops (named in `ember train --profile`, counted by the kernel budget).
#include "kernels/rms_norm.h"

#include <ATen/Parallel.h>
#include <torch/autograd.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

#include "ember/kernels/kernel_choice.h"
#include "ember/util/error.h"
#include "kernels/recorded_op.h"
#include "kernels/rms_norm_cpu_loops.h"

#ifdef EMBER_WITH_CUDA
#include <c10/cuda/CUDAGuard.h>

#include "kernels/cuda_glue.h"
#include "kernels/rms_norm_launch.h"
#endif

namespace ember::rms_norm {
namespace {

using kernels::RecordedOp;

bool low_or_same(at::ScalarType t, at::ScalarType stream) {
  return t == stream || (stream == at::kFloat && t == at::kBFloat16);
}

#ifdef EMBER_WITH_CUDA
bool kernel_runs_on(const at::Device& device) {
  static cuda_glue::ProbeCache known{};
  return cuda_glue::kernel_runs_on(known, device, probe_kernel, "RMSNorm", "using ATen ops");
}
Types types_of(at::ScalarType stream, at::ScalarType m, at::ScalarType y) {
  return {element_of(stream, "RMSNorm"), element_of(m, "RMSNorm"), element_of(y, "RMSNorm")};
}
#endif

template <class T>
const T* in(const at::Tensor& t) {
  return t.defined() ? static_cast<const T*>(t.const_data_ptr()) : nullptr;
}
template <class T>
T* out(const at::Tensor& t) {
  return t.defined() ? static_cast<T*>(t.mutable_data_ptr()) : nullptr;
}

// Runs body<S, M, Y>() for the storage types of the stream, m and y (kernels/rms_norm_cpu_loops.h).
template <class Body>
void dispatch(at::ScalarType stream, at::ScalarType m, at::ScalarType y, Body&& body) {
  if (stream == at::kDouble) return body.template operator()<double, double, double>();
  const bool m16 = m == at::kBFloat16, y16 = y == at::kBFloat16;
  if (m16 && y16) return body.template operator()<float, Bf16, Bf16>();
  if (m16) return body.template operator()<float, Bf16, float>();
  if (y16) return body.template operator()<float, float, Bf16>();
  body.template operator()<float, float, float>();
}

int64_t grain_for(int64_t D) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(D, 1)); }

void require_supported(const at::Tensor& x, const at::Tensor& m, const at::Tensor& g, at::ScalarType y_type) {
  if (!fused_supported(x, m, g, y_type))
    throw Error(fmt::format(
        "RMSNorm: the fused pass needs an fp32 or fp64 stream [..., D], a gain [D] of its type, a block output of "
        "its shape in its type or bf16 and an output in its type or bf16, on a CPU or a GPU the kernel runs on; got "
        "{} {}, gain {} {}, block output {}, output {}, on {}",
        c10::toString(x.scalar_type()), fmt::join(x.sizes(), "x"), c10::toString(g.scalar_type()),
        fmt::join(g.sizes(), "x"),
        m.defined() ? fmt::format("{} {}", c10::toString(m.scalar_type()), fmt::join(m.sizes(), "x")) : "none",
        c10::toString(y_type), x.device().str()));
}

}  // namespace

bool fused_supported(const at::Tensor& x, const at::Tensor& m, const at::Tensor& g, at::ScalarType y_type) {
  if (!x.defined() || !g.defined()) return false;
  const auto s = x.scalar_type();
  if ((s != at::kFloat && s != at::kDouble) || x.dim() < 1 || x.size(-1) == 0) return false;
  if (g.dim() != 1 || g.size(0) != x.size(-1) || g.scalar_type() != s || g.device() != x.device()) return false;
  if (m.defined() && (m.sizes() != x.sizes() || m.device() != x.device() || !low_or_same(m.scalar_type(), s)))
    return false;
  if (!low_or_same(y_type, s)) return false;
  if (x.is_cpu()) return true;
#ifdef EMBER_WITH_CUDA
  return x.is_cuda() && kernel_runs_on(x.device());  // any width (kernels/rms_norm_launch.h)
#else
  return false;
#endif
}

Forward forward(const at::Tensor& x_in, const at::Tensor& m_in, const at::Tensor& g, double eps,
                at::ScalarType y_type) {
  require_supported(x_in, m_in, g, y_type);
  RecordedOp op(m_in.defined() ? "ember::add_rms_norm" : "ember::rms_norm", {x_in, m_in, g});
  const auto x = x_in.contiguous(), gain = g.contiguous();
  const auto m = m_in.defined() ? m_in.contiguous() : m_in;
  const auto m_type = m.defined() ? m.scalar_type() : x.scalar_type();
  const int64_t D = x.size(-1);
  const Shape shape{x.numel() / D, D, eps};
  Forward f;
  if (m.defined()) f.h = at::empty(x.sizes(), x.options());
  f.y = at::empty(x.sizes(), x.options().dtype(y_type));
  f.r = at::empty({shape.rows}, x.options());
#ifdef EMBER_WITH_CUDA
  if (x.is_cuda()) {
    const c10::cuda::CUDAGuard guard(x.device());
    cuda_glue::check_launch(
        "RMSNorm", launch_forward(in<void>(x), in<void>(m), in<void>(gain), out<void>(f.h), out<void>(f.y),
                                  out<void>(f.r), types_of(x.scalar_type(), m_type, y_type), shape, cuda_glue::stream_of(x)));
    op.outputs({f.h, f.y, f.r});
    return f;
  }
#endif
  dispatch(x.scalar_type(), m_type, y_type, [&]<class S, class M, class Y>() {
    at::parallel_for(0, shape.rows, grain_for(D), [&](int64_t r0, int64_t r1) {
      cpu::forward_rows(in<S>(x), in<M>(m), in<S>(gain), out<S>(f.h), out<Y>(f.y), out<S>(f.r), shape, r0, r1);
    });
  });
  op.outputs({f.h, f.y, f.r});
  return f;
}

Backward backward(const at::Tensor& dh_in, const at::Tensor& dy_in, const at::Tensor& h, const at::Tensor& g,
                  const at::Tensor& r, at::ScalarType m_type) {
  RecordedOp op("ember::rms_norm_backward", {dh_in, dy_in, h, g, r});
  const auto s = h.scalar_type();
  const auto dy = (low_or_same(dy_in.scalar_type(), s) ? dy_in : dy_in.to(s)).contiguous();
  const auto dh = dh_in.defined() ? dh_in.to(s).contiguous() : dh_in;
  const auto gain = g.contiguous();
  const int64_t D = h.size(-1);
  const Shape shape{h.numel() / D, D, 0.0};
  Backward b;
  b.dx = at::empty(h.sizes(), h.options());
  if (m_type != s) b.dm = at::empty(h.sizes(), h.options().dtype(m_type));
#ifdef EMBER_WITH_CUDA
  if (h.is_cuda()) {
    const c10::cuda::CUDAGuard guard(h.device());
    auto partial = at::empty({backward_blocks(shape.rows), D}, h.options());
    cuda_glue::check_launch("RMSNorm backward",
                            launch_backward(in<void>(dh), in<void>(dy), in<void>(h), in<void>(gain), in<void>(r),
                                            out<void>(b.dx), out<void>(b.dm), out<void>(partial),
                                            types_of(s, m_type, dy.scalar_type()), shape, cuda_glue::stream_of(h)));
    b.dg = partial.sum(0);
    op.outputs({b.dx, b.dm, b.dg});
    return b;
  }
#endif
  // dg per thread in fp64, summed here: no ATen ops besides the one recorded for the pass.
  const int64_t threads = at::get_num_threads();
  std::vector<double> partial(static_cast<size_t>(threads * D), 0.0);
  dispatch(s, m_type, dy.scalar_type(), [&]<class S, class M, class Y>() {
    at::parallel_for(0, shape.rows, grain_for(D), [&](int64_t r0, int64_t r1) {
      cpu::backward_rows(in<S>(dh), in<Y>(dy), in<S>(h), in<S>(gain), in<S>(r), out<S>(b.dx), out<M>(b.dm),
                         partial.data() + at::get_thread_num() * D, shape, r0, r1);
    });
    b.dg = at::empty({D}, h.options());
    S* dg = out<S>(b.dg);
    for (int64_t i = 0; i < D; ++i) {
      double sum = 0.0;
      for (int64_t t = 0; t < threads; ++t) sum += partial[static_cast<size_t>(t * D + i)];
      dg[i] = static_cast<S>(sum);
    }
  });
  op.outputs({b.dx, b.dm, b.dg});
  return b;
}

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The gradients of the fused pass from those of h (along the stream; undefined without m or when h
// went unused) and of y, with what forward saved: h (x without m), g, 1/rms.
Backward saved_backward(AutogradContext* ctx, const at::Tensor& dh, at::Tensor dy) {
  const auto saved = ctx->get_saved_variables();
  if (!dy.defined()) dy = at::zeros_like(saved[0]);  // only h was used
  const auto m_type = static_cast<at::ScalarType>(ctx->saved_data["m_type"].toInt());
  return backward(dh, dy, saved[0], saved[1], saved[2], m_type);
}

// y = RMSNorm(x) g in one pass each way; saves x, g and the per-row 1/rms.
struct FusedRmsNorm : torch::autograd::Function<FusedRmsNorm> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x_in, const at::Tensor& g, double eps) {
    ctx->set_materialize_grads(false);  // an unused output's gradient stays undefined, not zeros
    const auto x = x_in.contiguous();
    auto f = rms_norm::forward(x, {}, g, eps, x.scalar_type());
    kernels::testing::apply_fault(kernels::Op::norm, f.y);
    ctx->save_for_backward({x, g, f.r});
    ctx->saved_data["m_type"] = static_cast<int64_t>(x.scalar_type());
    return f.y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    if (!grads[0].defined()) return {at::Tensor(), at::Tensor(), at::Tensor()};
    auto b = saved_backward(ctx, {}, grads[0]);
    return {b.dx, b.dg, {}};
  }
};

// {h, y} = {x + m, RMSNorm(x + m) g} in one pass each way, y in y_type; saves h, g and the per-row
// 1/rms. Backward adds the stream's gradient of h into the norm's: dx, and dm (in m's type).
struct FusedAddRmsNorm : torch::autograd::Function<FusedAddRmsNorm> {
  static variable_list forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& m, const at::Tensor& g,
                               double eps, int64_t y_type) {
    ctx->set_materialize_grads(false);  // h unused (the final norm's): no zero-filled dh read in backward
    auto f = rms_norm::forward(x, m, g, eps, static_cast<at::ScalarType>(y_type));
    kernels::testing::apply_fault(kernels::Op::norm, f.y);
    ctx->save_for_backward({f.h, g, f.r});
    ctx->saved_data["m_type"] = static_cast<int64_t>(m.scalar_type());
    return {f.h, f.y};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto b = saved_backward(ctx, grads[0], grads[1]);
    return {b.dx, b.dm.defined() ? b.dm : b.dx, b.dg, {}, {}};
  }
};

bool fused(const at::Tensor& x) { return kernels::use_fused(kernels::Op::norm, x.device()); }

at::Tensor aten_norm(const at::Tensor& x, const at::Tensor& g, double eps) {
  return at::rms_norm(x, {x.size(-1)}, g, eps);
}

}  // namespace

int64_t saved_bytes_per_row(int64_t width, int64_t x_elem, bool fused) {
  return (fused ? width + 1 : 2 * width + 1) * x_elem;  // what FusedRmsNorm and FusedAddRmsNorm save
}

at::Tensor norm(const at::Tensor& x, const at::Tensor& g, double eps) {
  if (!fused(x) || !fused_supported(x, {}, g, x.scalar_type())) return aten_norm(x, g, eps);
  return FusedRmsNorm::apply(x, g, eps);
}

std::pair<at::Tensor, at::Tensor> add_norm(const at::Tensor& x, const at::Tensor& m, const at::Tensor& g, double eps,
                                           at::ScalarType y_type) {
  if (!fused(x) || !fused_supported(x, m, g, y_type)) {
    auto h = x + m;
    auto y = aten_norm(h, g, eps);
    return {h, y.scalar_type() == y_type ? y : y.to(y_type)};
  }
  auto hy = FusedAddRmsNorm::apply(x, m, g, eps, static_cast<int64_t>(y_type));
  return {hy[0], hy[1]};
}

}  // namespace ember::rms_norm
