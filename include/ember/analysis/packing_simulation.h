// The packing simulation behind the capacity constants (docs/capacity.md, "The packing
// simulation"): for k unit vectors in d dimensions, the smallest achievable max |cos|
//   random     min over `draws` sets of N(0, 1) vectors of max_{i != j} |cos|
//   optimised  Adam on the vectors (normalised every step) against sum_{i != j} |G_ij|^p;
//              eps* = max |G_ij| at the last step
// swept over a (k, d) grid. Any device: the paper's grid is GPU work, small grids run on a CPU.
#pragma once
#include <ATen/ATen.h>

#include <functional>
#include <string>
#include <vector>

#include "ember/config/enum_names.h"

namespace ember {

// How a point's packing was found; `unlabelled` for points read without a kind (a paper's [k, d, eps]).
enum class PackingKind { unlabelled, random, optimised };
inline std::span<const EnumName<PackingKind>> enum_names(PackingKind) {
  static constexpr EnumName<PackingKind> names[] = {
      {PackingKind::unlabelled, ""}, {PackingKind::random, "random"}, {PackingKind::optimised, "optimised"}};
  return names;
}

struct PackingPoint {
  PackingKind kind = PackingKind::unlabelled;
  int64_t k = 0, d = 0;
  double eps = 0.0;        // the packing's max |cos|
  int64_t iterations = 0;  // draws (random) or Adam steps (optimised)
  int exponent = 0;        // optimised: p of the loss
  double lr = 0.0;         // optimised: Adam's learning rate
  double seconds = 0.0;
};

// docs/capacity.md: p = min(floor(M / ln d), 20), M = 40 if k <= 4000, 50 if d >= 3072, else 60
int packing_exponent(int64_t k, int64_t d);
// docs/capacity.md: lr = 0.005 if d <= 1024 else 0.0025
double packing_learning_rate(int64_t d);

// max_{i != j} |cos(x_i, x_j)| over the rows of a unit-row matrix, in Gram blocks.
double max_abs_cosine(const at::Tensor& unit_rows, int64_t block = 4096);

// d/dV of the optimised packing's loss sum_{i != j} |G_ij|^p, G = U^T U, U = V with unit columns,
// written out by hand (no autograd graph of k x k temporaries); the max |G_ij| on request.
at::Tensor packing_gradient(const at::Tensor& v, int p, double* max_abs_cos = nullptr);

// Step callbacks report progress: (iterations done, max |cos| so far or at the current step).
using PackingProgress = std::function<void(int64_t done, double eps)>;
double random_packing_eps(int64_t k, int64_t d, int64_t draws, at::Device device, const PackingProgress& progress = {});
double optimised_packing_eps(int64_t k, int64_t d, int64_t steps, at::Device device,
                             const PackingProgress& progress = {});

struct SweepOptions {
  std::vector<int64_t> ks, ds;
  bool random = true, optimised = true;
  int64_t draws = 1000, steps = 5000;
  uint64_t seed = 0;  // each point reseeds the global generators from (seed, kind, k, d)
  at::Device device = at::kCPU;
  bool progress = true;  // progress with ETA on stderr
};
// Runs every (kind, k, d) point; on_point hears about each as it finishes (e.g. to save).
std::vector<PackingPoint> run_packing_sweep(const SweepOptions& o,
                                            const std::function<void(const std::vector<PackingPoint>&)>& on_point = {});

}  // namespace ember
