// The loss head (kernels/xent.h): its autograd function and chunked pass, the choice between the
// fused rows and ATen's ops for each chunk, and the fused rows: checks, then the CPU loops over rows
// split across threads, or one launch of the CUDA kernel on the current stream.
#include "kernels/xent.h"

#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/autograd.h>

#include <algorithm>
#include <atomic>
#include <utility>
#include <vector>

#include "ember/kernels/kernel_choice.h"
#include "ember/util/error.h"
#include "kernels/xent_cpu_loops.h"

#ifdef EMBER_WITH_CUDA
#include <c10/cuda/CUDAGuard.h>

#include "kernels/cuda_glue.h"
#include "kernels/xent_launch.h"
#endif

namespace ember::xent {
namespace {

bool fused_dtype(const at::Tensor& z) {
  const auto t = z.scalar_type();
  return t == at::kFloat || t == at::kDouble || t == at::kBFloat16;
}

struct Rows {  // what every row shares
  int64_t V, ld;
  const int64_t* targets;
  int64_t ignore;
  double s, g;
  bool grad;
};

int64_t rows_of(at::Tensor& z, const Rows& a, at::Tensor& loss, int64_t r0, int64_t r1) {
  const auto s = static_cast<float>(a.s), g = static_cast<float>(a.g);
  switch (z.scalar_type()) {
    case at::kDouble:
      return cpu::rows(z.mutable_data_ptr<double>(), a.V, a.ld, a.targets, a.ignore, a.s, a.g, a.grad,
                       loss.mutable_data_ptr<double>(), r0, r1);
    case at::kBFloat16:
      return cpu::rows(reinterpret_cast<Bf16*>(z.mutable_data_ptr<at::BFloat16>()), a.V, a.ld, a.targets, a.ignore, s,
                       g, a.grad, loss.mutable_data_ptr<float>(), r0, r1);
    default:
      return cpu::rows(z.mutable_data_ptr<float>(), a.V, a.ld, a.targets, a.ignore, s, g, a.grad,
                       loss.mutable_data_ptr<float>(), r0, r1);
  }
}

at::Tensor cpu_rows(at::Tensor& z, const at::Tensor& y, double s, double g, bool grad, int64_t ignore_index,
                    const at::Tensor& counted) {
  const int64_t n = z.size(0), V = z.size(1), ld = z.stride(0);
  const auto yc = y.contiguous();
  auto loss = at::empty({n}, z.options().dtype(z.scalar_type() == at::kDouble ? at::kDouble : at::kFloat));
  const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(V, 1));
  const int64_t* targets = yc.const_data_ptr<int64_t>();
  if (counted.defined()) g = mean_factor(g, counted.item<int64_t>());  // a CPU scalar: no sync
  const Rows rows{V, ld, targets, ignore_index, s, g, grad};
  std::atomic<int64_t> bad{n};  // the first row with a target outside [0, V) other than ignore_index
  at::parallel_for(0, n, grain, [&](int64_t r0, int64_t r1) {
    const int64_t first = rows_of(z, rows, loss, r0, r1);
    for (int64_t seen = bad.load(); first >= 0 && first < seen && !bad.compare_exchange_weak(seen, first);) {
    }
  });
  if (const int64_t r = bad.load(); r < n)
    throw Error(fmt::format("cross-entropy: target {} of row {} is outside the vocabulary [0, {})", targets[r], r, V));
  return loss;
}

#ifdef EMBER_WITH_CUDA
bool kernel_runs_on(const at::Device& device) {
  static cuda_glue::ProbeCache known{};
  return cuda_glue::kernel_runs_on(known, device, probe_xent_kernel, "cross-entropy", "using ATen ops");
}

at::Tensor cuda_rows(at::Tensor& z, const at::Tensor& y, double s, double g, bool grad, int64_t ignore_index,
                     const at::Tensor& counted) {
  const c10::cuda::CUDAGuard guard(z.device());
  const auto yc = y.contiguous();
  auto loss = at::empty({z.size(0)}, z.options().dtype(z.scalar_type() == at::kDouble ? at::kDouble : at::kFloat));
  cuda_glue::check_launch("cross-entropy", launch_xent(z.mutable_data_ptr(), element_of(z.scalar_type(), "cross-entropy"), z.size(0), z.size(1),
                                                       z.stride(0), yc.const_data_ptr<int64_t>(), ignore_index, s, g,
                                                       counted.defined() ? counted.const_data_ptr<int64_t>() : nullptr,
                                                       grad, loss.mutable_data_ptr(), cuda_glue::stream_of(z)));
  return loss;
}
#endif

}  // namespace

static at::Tensor checked_rows(at::Tensor& z, const at::Tensor& y, double s, double g, bool grad, int64_t ignore_index,
                               const at::Tensor& counted);

bool fused_supported(const at::Tensor& z) {
  if (z.dim() != 2 || !fused_dtype(z) || z.stride(1) != 1) return false;
  if (z.is_cpu()) return true;
#ifdef EMBER_WITH_CUDA
  return z.is_cuda() && kernel_runs_on(z.device());
#else
  return false;
#endif
}

at::Tensor softmax_xent_rows_(at::Tensor& z, const at::Tensor& y, double s, double g, bool grad, int64_t ignore_index,
                              const at::Tensor& counted) {
  // An op to the observers of ATen's ops: named in a profile (ember train --profile), and the
  // non-finite trace (model/nonfinite_trace.h) sees its inputs and outputs like any other op's.
  // The logits are overwritten: an observer that keeps inputs (the trace) is handed a copy of them.
  at::RecordFunction record(at::RecordScope::FUNCTION);
  std::vector<c10::IValue> inputs;
  if (record.isActive()) inputs = {record.needsInputs() ? z.clone() : z, y};
  record.before("ember::softmax_xent_rows_", &inputs);
  auto loss = checked_rows(z, y, s, g, grad, ignore_index, counted);
  if (record.isActive() && record.needsOutputs()) record.setOutputs(std::vector<c10::IValue>{loss, z});
  return loss;
}

static at::Tensor checked_rows(at::Tensor& z, const at::Tensor& y, double s, double g, bool grad, int64_t ignore_index,
                               const at::Tensor& counted) {
  if (!fused_supported(z))
    throw Error(fmt::format("cross-entropy: fused rows need [n, V] fp32, fp64 or bf16 logits with unit stride on a "
                            "CPU or a GPU the kernel runs on, got {} {} on {}",
                            c10::toString(z.scalar_type()), fmt::join(z.sizes(), "x"), z.device().str()));
  if (y.dim() != 1 || y.size(0) != z.size(0) || y.scalar_type() != at::kLong || y.device() != z.device())
    throw Error(fmt::format("cross-entropy: targets must be [{}] int64 on {}, got {} {} on {}", z.size(0),
                            z.device().str(), c10::toString(y.scalar_type()), fmt::join(y.sizes(), "x"),
                            y.device().str()));
  if (counted.defined() &&
      (counted.numel() != 1 || counted.scalar_type() != at::kLong || counted.device() != z.device()))
    throw Error(fmt::format("cross-entropy: the count of rows must be one int64 on {}, got {} {} on {}",
                            z.device().str(), c10::toString(counted.scalar_type()), fmt::join(counted.sizes(), "x"),
                            counted.device().str()));
#ifdef EMBER_WITH_CUDA
  if (z.is_cuda()) return cuda_rows(z, y, s, g, grad, ignore_index, counted);
#endif
  return cpu_rows(z, y, s, g, grad, ignore_index, counted);
}

void scale_unless_one_(at::Tensor& x, const at::Tensor& g) {
  if (g.numel() != 1)
    throw Error(fmt::format("scale_unless_one_: g must be a scalar, got {}", fmt::join(g.sizes(), "x")));
  if (g.is_cpu()) {
    // A CPU scalar, read in place: no ATen op, so a step's count of host syncs stays 0.
    const double v = g.scalar_type() == at::kDouble  ? *g.const_data_ptr<double>()
                     : g.scalar_type() == at::kFloat ? *g.const_data_ptr<float>()
                                                     : g.item<double>();
    if (v != 1.0) x.mul_(g.to(x.scalar_type()));
    return;
  }
#ifdef EMBER_WITH_CUDA
  if (x.is_cuda() && x.is_contiguous() && fused_dtype(x) && g.device() == x.device()) {
    const c10::cuda::CUDAGuard guard(x.device());
    const auto gx = g.to(x.scalar_type()).contiguous();  // freed after the launch: reused only in stream order
    cuda_glue::check_launch("scale_unless_one_", launch_scale_unless_one(x.mutable_data_ptr(), element_of(x.scalar_type(), "scale_unless_one_"), x.numel(),
                                                                         gx.const_data_ptr(), cuda_glue::stream_of(x)));
    return;
  }
#endif
  x.mul_(g.to(x.scalar_type()));
}

namespace {

struct Pass {
  at::Tensor loss_sum;        // sum over rows of CE, in the accumulation dtype
  at::Tensor grad_h, grad_w;  // d(f mean CE)/dh [N, D] and /dW [V, D]; undefined without gradients
};

struct Chunked {  // what every chunk shares
  at::ScalarType mm, acc;
  double scale, factor;  // s of CE(s h W^T, y); f: the caller's loss scale, folded into the gradients
  int64_t N, ignore_index;
  // The rows the mean is over (targets other than ignore_index): counted on the host for CPU
  // targets (-1 otherwise), else `counted_on_device`, an int64 the kernel and the ATen ops read
  // there (no host sync). ignoring: a row may be ignored (always so when not counted on the host).
  int64_t counted;
  at::Tensor counted_on_device;
  bool ignoring, grads, grad_weight, fused;
};

// f / (rows the mean is over), 0 when there are none: on the host, or (per_counted_on_device) a
// 0-dim tensor of `dtype` on the device, divided there in double as on the host.
double per_counted(const Chunked& c, double f) { return f / static_cast<double>(std::max<int64_t>(c.counted, 1)); }
at::Tensor per_counted_on_device(const Chunked& c, double f, at::ScalarType dtype) {
  return (f / c.counted_on_device.clamp_min(1).to(at::kDouble)).to(dtype);
}

// sum * f / (rows the mean is over): the mean loss times f, with no host sync on a GPU.
at::Tensor mean_of(const at::Tensor& sum, const Chunked& c, double f) {
  return c.counted >= 0 ? sum * per_counted(c, f) : sum * per_counted_on_device(c, f, sum.scalar_type());
}

// acc (+)= z^T hc: one GEMM into the accumulator (beta 1, or 0 for the first chunk). bf16 products
// go straight into the fp32 accumulator on a GPU; a CPU has no such GEMM and adds a bf16 product.
void accumulate_weight_grad(at::Tensor& acc, const at::Tensor& z, const at::Tensor& hc, bool first) {
  if (z.scalar_type() == acc.scalar_type()) {
    if (first) at::mm_out(acc, z.t(), hc);
    else acc.addmm_(z.t(), hc);
  } else if (acc.is_cuda()) {
    at::addmm_out(acc, acc, z.t(), hc, acc.scalar_type(), first ? 0.0 : 1.0);
  } else if (first) {
    acc.copy_(at::mm(z.t(), hc));
  } else {
    acc.add_(at::mm(z.t(), hc));
  }
}

// One chunk with ATen ops (kernels.loss_head = aten, or logits the fused rows do not take): fp32 copy of
// the logits, log_softmax, exp, scatter of -1, scale and cast back. Returns the gradient of the
// logits (mm dtype; undefined without gradients) and the chunk's CE per row. As in the fused rows,
// a row holding a non-finite logit gets a NaN loss and gradient (log_softmax alone leaves the rest
// of a row with a -inf finite; the row's sum of log-probabilities, one read of the chunk, is not),
// and an ignored row counts for nothing, whatever its logits.
std::pair<at::Tensor, at::Tensor> aten_chunk(at::Tensor z, const at::Tensor& yc, const Chunked& c) {
  const auto kept = c.ignoring ? yc.ne(c.ignore_index) : at::Tensor();  // rows that count
  const auto y = c.ignoring ? at::where(kept, yc, 0) : yc;              // in range for gather and scatter
  z = z.to(c.acc);
  if (c.scale != 1.0) z.mul_(c.scale);
  auto log_p = at::log_softmax(z, -1);  // z - log sum_v exp z_v, stably, in one fused kernel
  z.reset();
  const auto total = log_p.sum(-1), nonfinite = total - total;        // 0, or NaN for a non-finite row
  auto ce = -log_p.gather(1, y.unsqueeze(1)).squeeze(1) + nonfinite;  // CE = log sum exp z - z_y
  if (c.ignoring) ce = at::where(kept, ce, 0);
  if (!c.grads) return {at::Tensor(), ce};
  auto g = log_p.exp_();                                                           // softmax(z)
  g.scatter_add_(1, y.unsqueeze(1), at::full({g.size(0), 1}, -1.0, g.options()));  // - onehot(y)
  const double sf = c.scale * c.factor;  // times 1 / N, per row (NaN for a non-finite one)
  g.mul_(c.counted >= 0 ? nonfinite.unsqueeze(1) + per_counted(c, sf)
                        : nonfinite.unsqueeze(1) + per_counted_on_device(c, sf, c.acc));
  if (c.ignoring) g = at::where(kept.unsqueeze(1), g, 0);
  return {g.to(c.mm), ce};
}

// One pass over chunks of rows: z = h W^T, CE_i = logsumexp(s z_i) - s z_{i, y_i}; with gradients,
// dCE/dz = (softmax(s z) - onehot(y)) s f / N, formed in place over z and folded into h and W at once.
Pass chunked_pass(const at::Tensor& h, const at::Tensor& w, const at::Tensor& y, int64_t rows, const Chunked& c,
                  at::Tensor* per_row = nullptr) {
  // The dtypes are the plan's, whatever autocast says: autocast off for every device.
  const c10::impl::ExcludeDispatchKeyGuard explicit_dtypes(c10::autocast_dispatch_keyset);
  const auto wm = w.to(c.mm);
  Pass p{at::zeros({}, h.options().dtype(c.acc)), {}, {}};
  if (c.grads) {
    // Zeros, not empty: its chunks are views handed to mm_out, and a view of uninitialised memory
    // can hold NaN bit patterns that the non-finite trace (model/nonfinite_trace.h) would report.
    p.grad_h = at::zeros({c.N, h.size(1)}, h.options().dtype(c.mm));
    if (c.grad_weight)  // written whole by the first chunk's GEMM (beta 0)
      p.grad_w = c.N > 0 ? at::empty(w.sizes(), w.options().dtype(c.acc)) : at::zeros(w.sizes(), w.options().dtype(c.acc));
  }
  // The fused rows divide f by the count themselves where it is on the device.
  const double g = c.counted >= 0 ? per_counted(c, c.factor) : c.factor;
  for (int64_t start = 0; start < c.N; start += rows) {
    const int64_t n = std::min(rows, c.N - start);
    const auto hc = h.narrow(0, start, n).to(c.mm);
    const auto yc = y.narrow(0, start, n);
    auto z = at::mm(hc, wm.t());  // [n, V] logits in the matmul dtype
    at::Tensor ce;
    if (c.fused) {
      ce = softmax_xent_rows_(z, yc, c.scale, g, c.grads, c.ignore_index, c.counted_on_device);
      kernels::testing::apply_fault(kernels::Op::loss_head, ce);
    } else {
      auto [grad, chunk_ce] = aten_chunk(std::move(z), yc, c);
      z = std::move(grad), ce = std::move(chunk_ce);
    }
    p.loss_sum += ce.sum();
    if (per_row) per_row->narrow(0, start, n).copy_(ce);
    if (!c.grads) continue;
    auto grad_rows = p.grad_h.narrow(0, start, n);
    at::mm_out(grad_rows, z, wm);
    if (c.grad_weight) accumulate_weight_grad(p.grad_w, z, hc, start == 0);
  }
  return p;
}

// The targets other than ignore_index, counted in a loop over CPU targets: no ATen op, nothing read
// back (the step's ops and host syncs stay as they were).
int64_t counted_on_host(const at::Tensor& y, int64_t ignore_index) {
  const auto targets = y.expect_contiguous();
  const int64_t* t = targets->const_data_ptr<int64_t>();
  return std::count_if(t, t + targets->numel(), [&](int64_t v) { return v != ignore_index; });
}

Chunked plan(const at::Tensor& h, const at::Tensor& w, const at::Tensor& y, const Head& head, double factor, bool grads,
             bool grad_weight) {
  Chunked c;
  const int64_t ignore_index = head.ignore_index;
  c.mm = head.matmul;
  c.acc = c.mm == at::kDouble ? at::kDouble : at::kFloat;
  c.scale = head.scale, c.factor = factor, c.N = h.size(0), c.ignore_index = ignore_index;
  c.counted = y.is_cpu() && y.scalar_type() == at::kLong ? counted_on_host(y, ignore_index) : -1;
  if (c.counted < 0) c.counted_on_device = y.ne(ignore_index).sum();  // one pass over the N targets
  c.ignoring = c.counted != c.N;
  c.grads = grads, c.grad_weight = grads && grad_weight;
  c.fused = kernels::use_fused(kernels::Op::loss_head, h.device()) &&
            fused_supported(at::empty({0, w.size(0)}, h.options().dtype(c.mm)));
  return c;
}

// The device's budget, split evenly over the rows (no thin last chunk). On a GPU the fused pass
// keeps the logits in the matmul dtype (bf16: twice the rows in the same bytes, half the weight
// gradient's accumulations); elsewhere the rows of fp32 logits, as the ATen pass makes (a CPU's bf16
// weight-gradient product beside a larger chunk would raise the peak).
int64_t loss_chunk_rows(const at::Tensor& h, const at::Tensor& w, const Chunked& c, int64_t asked) {
  if (asked > 0) return asked;
  const int64_t bytes = c.fused && h.is_cuda() ? static_cast<int64_t>(c10::elementSize(c.mm)) : 4;
  const int64_t most = chunk_rows(w.size(0), chunk_budget_bytes(h.is_cuda()), bytes);
  return balanced_chunk_rows(h.size(0), most);
}

// The weight gradient's taker (Gradient::take_weight_gradient) as an autograd context's saved value.
struct Taker : torch::CustomClassHolder {
  explicit Taker(std::function<void(at::Tensor)> f) : take(std::move(f)) {}
  std::function<void(at::Tensor)> take;
};

// With root, backward honours the gradient the loss receives: 1 under loss.backward() or
// loss + aux (the stored gradients go on as formed), anything else under 0.5 * loss: the stored
// gradients are scaled in place (scale_unless_one_: a pass over [N, D] and [V, D] only when it is
// not 1, decided on the device, no host sync). A taker of the weight gradient then gets the scaled
// gradient, and autograd none from here.
struct LinearCrossEntropy : torch::autograd::Function<LinearCrossEntropy> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& h, const at::Tensor& w,
                            const at::Tensor& y, const Head& head, const Gradient& gradient) {
    // A frozen head (e.g. the teach signal of model/lm.h, which wants dL/dh only) skips dL/dW.
    const auto c = plan(h, w, y, head, gradient.factor, true, ctx->needs_input_grad(1));
    Pass p = chunked_pass(h, w, y, loss_chunk_rows(h, w, c, head.chunk_rows), c);
    const auto grad_w = p.grad_w.defined() ? p.grad_w.to(w.scalar_type()) : at::Tensor();
    ctx->save_for_backward({p.grad_h.to(h.scalar_type()), grad_w});
    ctx->saved_data["root"] = gradient.root;
    if (gradient.root && gradient.take_weight_gradient && grad_w.defined())
      ctx->saved_data["taker"] = c10::IValue::make_capsule(c10::make_intrusive<Taker>(gradient.take_weight_gradient));
    return mean_of(p.loss_sum, c, gradient.factor);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    auto saved = ctx->get_saved_variables();
    const auto& g = grad_out[0];  // a scalar: the chain rule only scales the stored gradients
    if (!ctx->saved_data["root"].toBool()) {
      saved[0] = saved[0] * g.to(saved[0].scalar_type());
      if (saved[1].defined()) saved[1] = saved[1] * g.to(saved[1].scalar_type());
      return {saved[0], saved[1], {}, {}, {}};
    }
    scale_unless_one_(saved[0], g);
    if (saved[1].defined()) scale_unless_one_(saved[1], g);
    if (ctx->saved_data.count("taker")) {  // the taker hands it on
      c10::static_intrusive_pointer_cast<Taker>(ctx->saved_data["taker"].toCapsule())->take(saved[1]);
      saved[1] = at::Tensor();
    }
    return {saved[0], saved[1], {}, {}, {}};
  }
};

}  // namespace

at::Tensor loss_per_row(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets,
                        const Head& head) {
  at::NoGradGuard no_grad;
  const auto c = plan(hidden, weight, targets, head, 1.0, false, false);
  const int64_t rows = loss_chunk_rows(hidden, weight, c, head.chunk_rows);
  auto out = at::zeros({hidden.size(0)}, hidden.options().dtype(c.acc));  // zeros: see chunked_pass
  chunked_pass(hidden, weight, targets, rows, c, &out);
  return out;
}

int64_t chunk_budget_bytes(bool gpu) { return gpu ? int64_t{4} << 30 : int64_t{256} << 20; }

int64_t chunk_rows(int64_t vocab, int64_t budget_bytes, int64_t bytes_per_logit) {
  return std::max<int64_t>(1, budget_bytes / (std::max<int64_t>(bytes_per_logit, 1) * std::max<int64_t>(vocab, 1)));
}

int64_t balanced_chunk_rows(int64_t rows, int64_t max_rows) {
  const int64_t chunks = (rows + max_rows - 1) / std::max<int64_t>(max_rows, 1);
  return chunks <= 1 ? std::max<int64_t>(rows, 1) : (rows + chunks - 1) / chunks;
}

Parts loss_parts(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets, const Head& head) {
  at::NoGradGuard no_graph;
  const auto c = plan(hidden, weight, targets, head, 1.0, true, true);
  Pass p = chunked_pass(hidden, weight, targets, loss_chunk_rows(hidden, weight, c, head.chunk_rows), c);
  return {mean_of(p.loss_sum, c, 1.0), p.grad_h.to(hidden.scalar_type()), p.grad_w.to(weight.scalar_type())};
}

at::Tensor loss(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets, const Head& head,
                const Gradient& gradient) {
  const bool grads = at::GradMode::is_enabled() && (hidden.requires_grad() || weight.requires_grad());
  if (!grads) {
    const auto c = plan(hidden, weight, targets, head, 1.0, false, false);
    const int64_t rows = loss_chunk_rows(hidden, weight, c, head.chunk_rows);
    return mean_of(chunked_pass(hidden, weight, targets, rows, c).loss_sum, c, gradient.factor);
  }
  return LinearCrossEntropy::apply(hidden, weight, targets, head, gradient);
}

}  // namespace ember::xent
