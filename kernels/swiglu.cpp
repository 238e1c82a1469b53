// SwiGLU's gate (kernels/swiglu.h): the autograd function, the choice between the fused passes and
// ATen's ops, and the passes: checks, the rows' strides, then the CPU loops over rows split across
// threads or one launch of the CUDA kernel on the current stream. Each pass is an op to the
// observers of ATen's ops (named in `ember train --profile`, counted by the kernel budget).
#include "kernels/swiglu.h"

#include <ATen/Parallel.h>
#include <torch/autograd.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "ember/kernels/kernel_choice.h"
#include "ember/util/error.h"
#include "kernels/recorded_op.h"
#include "kernels/swiglu_cpu_loops.h"

#ifdef EMBER_WITH_CUDA
#include <c10/cuda/CUDAGuard.h>

#include "kernels/cuda_glue.h"
#include "kernels/swiglu_launch.h"
#endif

namespace ember::swiglu {
namespace {

using kernels::RecordedOp;

bool fused_dtype(const at::Tensor& t) {
  const auto s = t.scalar_type();
  return s == at::kFloat || s == at::kDouble || s == at::kBFloat16;
}

// t as rows of its last dimension with one row stride: itself when its strides allow, else a copy.
at::Tensor as_rows(const at::Tensor& t) {
  bool even = t.dim() >= 1 && t.stride(-1) == 1;
  for (int64_t d = 0; even && d + 2 < t.dim(); ++d) even = t.stride(d) == t.size(d + 1) * t.stride(d + 1);
  return even ? t : t.contiguous();
}
int64_t row_stride(const at::Tensor& rows) { return rows.dim() >= 2 ? rows.stride(-2) : rows.size(-1); }

#ifdef EMBER_WITH_CUDA
bool kernel_runs_on(const at::Device& device) {
  static cuda_glue::ProbeCache known{};
  return cuda_glue::kernel_runs_on(known, device, probe_kernel, "SwiGLU gate", "using ATen ops");
}
#endif

// Pointers of one dtype, as the CPU loops take them.
template <class T, class S>
const T* in(const at::Tensor& t) {
  return reinterpret_cast<const T*>(t.const_data_ptr<S>());
}
template <class T, class S>
T* out(at::Tensor& t) {
  return reinterpret_cast<T*>(t.mutable_data_ptr<S>());
}

// Runs body<T, S>() for the storage type S of t and the loops' element type T.
template <class Body>
void dispatch(const at::Tensor& t, Body&& body) {
  switch (t.scalar_type()) {
    case at::kDouble: body.template operator()<double, double>(); break;
    case at::kBFloat16: body.template operator()<Bf16, at::BFloat16>(); break;
    default: body.template operator()<float, float>(); break;
  }
}

int64_t grain_for(int64_t width) { return std::max<int64_t>(1, 32768 / std::max<int64_t>(width, 1)); }

void forward_into(const at::Tensor& a, const at::Tensor& b, at::Tensor& z, const Rows& rows) {
#ifdef EMBER_WITH_CUDA
  if (a.is_cuda()) {
    const c10::cuda::CUDAGuard guard(a.device());
    cuda_glue::check_launch("SwiGLU gate", launch_forward(a.const_data_ptr(), b.const_data_ptr(), z.mutable_data_ptr(),
                                                         element_of(a.scalar_type(), "SwiGLU gate"), rows, cuda_glue::stream_of(a)));
    return;
  }
#endif
  dispatch(a, [&]<class T, class S>() {
    at::parallel_for(0, rows.n, grain_for(rows.width), [&](int64_t r0, int64_t r1) {
      cpu::forward_rows(in<T, S>(a), in<T, S>(b), out<T, S>(z), rows, r0, r1);
    });
  });
}

void backward_into(const at::Tensor& a, const at::Tensor& b, const at::Tensor& dz, at::Tensor& da, at::Tensor& db,
                   const Rows& rows) {
#ifdef EMBER_WITH_CUDA
  if (a.is_cuda()) {
    const c10::cuda::CUDAGuard guard(a.device());
    cuda_glue::check_launch("SwiGLU gate backward",
                            launch_backward(a.const_data_ptr(), b.const_data_ptr(), dz.const_data_ptr(),
                                            da.mutable_data_ptr(), db.mutable_data_ptr(), element_of(a.scalar_type(), "SwiGLU gate"), rows,
                                            cuda_glue::stream_of(a)));
    return;
  }
#endif
  dispatch(a, [&]<class T, class S>() {
    at::parallel_for(0, rows.n, grain_for(rows.width), [&](int64_t r0, int64_t r1) {
      cpu::backward_rows(in<T, S>(a), in<T, S>(b), in<T, S>(dz), out<T, S>(da), out<T, S>(db), rows, r0, r1);
    });
  });
}

void require_supported(const at::Tensor& a, const at::Tensor& b) {
  if (!fused_supported(a, b))
    throw Error(fmt::format("SwiGLU gate: the fused kernels need two fp32, fp64 or bf16 tensors of one shape on a "
                            "CPU or a GPU the kernel runs on, got {} {} and {} {} on {}",
                            c10::toString(a.scalar_type()), fmt::join(a.sizes(), "x"), c10::toString(b.scalar_type()),
                            fmt::join(b.sizes(), "x"), a.device().str()));
}

}  // namespace

bool fused_supported(const at::Tensor& a, const at::Tensor& b) {
  if (a.dim() < 1 || a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type() || !fused_dtype(a) ||
      a.device() != b.device())
    return false;
  if (a.is_cpu()) return true;
#ifdef EMBER_WITH_CUDA
  return a.is_cuda() && kernel_runs_on(a.device());
#else
  return false;
#endif
}

at::Tensor gate_forward(const at::Tensor& a_in, const at::Tensor& b_in) {
  require_supported(a_in, b_in);
  RecordedOp op("ember::swiglu_gate", {a_in, b_in});
  const auto a = as_rows(a_in), b = as_rows(b_in);
  auto z = at::empty(a.sizes(), a.options().memory_format(at::MemoryFormat::Contiguous));
  const int64_t width = a.size(-1);
  const Rows rows{a.numel() / std::max<int64_t>(width, 1), width, row_stride(a), row_stride(b), width, 0, 0, 0};
  forward_into(a, b, z, rows);
  op.outputs({z});
  return z;
}

std::pair<at::Tensor, at::Tensor> gate_backward(const at::Tensor& a_in, const at::Tensor& b_in, const at::Tensor& dz_in,
                                                const at::Tensor& into) {
  require_supported(a_in, b_in);
  RecordedOp op("ember::swiglu_gate_backward", {a_in, b_in, dz_in});
  const auto a = as_rows(a_in), b = as_rows(b_in), dz = as_rows(dz_in.to(a_in.scalar_type()));
  const int64_t width = a.size(-1);
  at::Tensor da, db;
  if (into.defined()) {
    if (into.scalar_type() != a.scalar_type() || !into.is_contiguous() || into.size(-1) != 2 * width ||
        into.numel() != 2 * a.numel())
      throw Error(fmt::format("SwiGLU gate: the gradient buffer {} {} does not hold two halves of {}",
                              c10::toString(into.scalar_type()), fmt::join(into.sizes(), "x"), fmt::join(a.sizes(), "x")));
    da = into.narrow(-1, 0, width);
    db = into.narrow(-1, width, width);
  } else {
    da = at::empty(a.sizes(), a.options().memory_format(at::MemoryFormat::Contiguous));
    db = at::empty(a.sizes(), a.options().memory_format(at::MemoryFormat::Contiguous));
  }
  const Rows rows{a.numel() / std::max<int64_t>(width, 1), width, row_stride(a), row_stride(b), 0, row_stride(dz),
                  row_stride(da), row_stride(db)};
  backward_into(a, b, dz, da, db, rows);
  op.outputs({da, db});
  return {da, db};
}

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

at::Tensor faulty_forward(const at::Tensor& a, const at::Tensor& b) {
  auto z = gate_forward(a, b);
  kernels::testing::apply_fault(kernels::Op::swiglu, z);
  return z;
}

// z = SiLU(a) b for operands of their own; backward keeps a and b.
struct SwiGLUGate : torch::autograd::Function<SwiGLUGate> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& a, const at::Tensor& b) {
    ctx->save_for_backward({a, b});
    return faulty_forward(a, b);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    auto [da, db] = gate_backward(saved[0], saved[1], grads[0]);
    return {da, db};
  }
};

std::pair<at::Tensor, at::Tensor> halves(const at::Tensor& gate_up) {
  const int64_t F = gate_up.size(-1) / 2;
  return {gate_up.narrow(-1, 0, F), gate_up.narrow(-1, F, F)};
}

// The same on the stacked [a | b]; backward keeps it and writes [da | db] as one buffer.
struct StackedSwiGLUGate : torch::autograd::Function<StackedSwiGLUGate> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& gate_up) {
    ctx->save_for_backward({gate_up});
    const auto [a, b] = halves(gate_up);
    return faulty_forward(a, b);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto gate_up = ctx->get_saved_variables()[0];
    const auto [a, b] = halves(gate_up);
    auto into = at::empty(gate_up.sizes(), gate_up.options().memory_format(at::MemoryFormat::Contiguous));
    gate_backward(a, b, grads[0], into);
    return {into};
  }
};

bool fused(const at::Tensor& a, const at::Tensor& b) {
  return kernels::use_fused(kernels::Op::swiglu, a.device()) && fused_supported(a, b);
}

}  // namespace

int64_t saved_bytes_per_row(int64_t width, int64_t elem, bool fused) {
  return (fused ? 2 : 3) * width * elem;  // what SwiGLUGate and StackedSwiGLUGate save
}

at::Tensor gate(const at::Tensor& a, const at::Tensor& b) {
  if (!fused(a, b)) return at::silu(a) * b;
  return SwiGLUGate::apply(a, b);
}

at::Tensor gate_stacked(const at::Tensor& gate_up) {
  if (gate_up.dim() < 1 || gate_up.size(-1) % 2 != 0)
    throw Error(fmt::format("SwiGLU gate: expected gate and up stacked, [..., 2F], got {}",
                            fmt::join(gate_up.sizes(), "x")));
  const auto [a, b] = halves(gate_up);
  if (!fused(a, b)) {
    const auto ab = gate_up.chunk(2, -1);  // backward: autograd gathers the two gradients into one
    return at::silu(ab[0]) * ab[1];
  }
  return StackedSwiGLUGate::apply(gate_up);
}

}  // namespace ember::swiglu
