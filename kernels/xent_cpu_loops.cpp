#include "kernels/xent_cpu_loops.h"

#include "kernels/simd_clones.h"

namespace ember::xent::cpu {
namespace {

// The row maximum of s z, NaN when the row holds a NaN or an infinity (xent_rows.h: max_step,
// nonfinite_step). The order of a maximum and of a sum of zeros does not change them, so the SIMD
// reduction leaves the result exact.
template <class A, class T>
inline __attribute__((always_inline)) A row_max(const T* z, int64_t V, A s) {
  A m = -INFINITY, nonfinite = 0;
#pragma omp simd reduction(max : m) reduction(+ : nonfinite)
  for (int64_t j = 0; j < V; ++j) {
    const A v = s * widen(z[j]);
    m = max_step(m, v);
    nonfinite = nonfinite_step(nonfinite, v);
  }
  return m + nonfinite;
}

// sum_j exp(s z_j - m). The SIMD sum adds in an order set by the vector width: the same on one
// machine (runs and resumes agree bit for bit), within round-off across CPUs.
template <class A, class T>
inline __attribute__((always_inline)) A row_sum_exp(const T* z, int64_t V, A s, A m) {
  A sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < V; ++j) sum += exp_nonpositive(s * widen(z[j]) - m);
  return sum;
}

// The same sum, writing each exp(s z_j - m) over z_j for the gradient pass to scale: one
// exponential per element instead of two (in bf16 the stored value is rounded once more).
template <class A, class T>
inline __attribute__((always_inline)) A row_sum_exp_stored(T* z, int64_t V, A s, A m) {
  A sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < V; ++j) {
    const A e = exp_nonpositive(s * widen(z[j]) - m);
    sum += e;
    store(e, z + j);
  }
  return sum;
}

template <class T, class A>
inline __attribute__((always_inline)) int64_t xent(T* z, int64_t V, int64_t ld, const int64_t* y, int64_t ignore, A s,
                                                   A g, bool grad, A* loss, int64_t r0, int64_t r1) {
  int64_t bad = -1;
  for (int64_t r = r0; r < r1; ++r) {
    T* row = z + r * ld;
    if (y[r] == ignore) {  // counts for nothing: no loss, no gradient, whatever its logits
      loss[r] = A(0);
      if (!grad) continue;
#pragma omp simd
      for (int64_t j = 0; j < V; ++j) store(A(0), row + j);
      continue;
    }
    if (y[r] < 0 || y[r] >= V) {
      loss[r] = A(NAN);
      if (bad < 0) bad = r;
      continue;
    }
    const A target = s * widen(row[y[r]]);
    const A m = row_max<A>(row, V, s);
    const A sum = grad ? row_sum_exp_stored<A>(row, V, s, m) : row_sum_exp<A>(row, V, s, m);
    const A lse = m + std::log(sum);  // log sum_j exp(s z_j)
    loss[r] = lse - target;           // CE = lse - s z_y
    if (!grad) continue;
    const A sg = s * g, scale = sg / sum;  // softmax_j s g = exp(s z_j - m) / sum * s g
#pragma omp simd
    for (int64_t j = 0; j < V; ++j) store(widen(row[j]) * scale, row + j);
    store((exp_nonpositive(target - lse) - A(1)) * sg, row + y[r]);  // - onehot(y)
  }
  return bad;
}

}  // namespace

EMBER_SIMD_CLONES int64_t rows(float* z, int64_t V, int64_t ld, const int64_t* y, int64_t ignore, float s, float g,
                               bool grad, float* loss, int64_t r0, int64_t r1) {
  return xent(z, V, ld, y, ignore, s, g, grad, loss, r0, r1);
}

EMBER_SIMD_CLONES int64_t rows(Bf16* z, int64_t V, int64_t ld, const int64_t* y, int64_t ignore, float s, float g,
                               bool grad, float* loss, int64_t r0, int64_t r1) {
  return xent(z, V, ld, y, ignore, s, g, grad, loss, r0, r1);
}

EMBER_SIMD_CLONES int64_t rows(double* z, int64_t V, int64_t ld, const int64_t* y, int64_t ignore, double s, double g,
                               bool grad, double* loss, int64_t r0, int64_t r1) {
  return xent(z, V, ld, y, ignore, s, g, grad, loss, r0, r1);
}

}  // namespace ember::xent::cpu
