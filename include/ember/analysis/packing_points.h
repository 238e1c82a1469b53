// Packing-simulation results on disk: what `ember capacity simulate` writes and `fit` reads.
//   CSV   header "kind,k,d,eps,iterations,exponent,lr,seconds"; only k, d, eps are required
//   JSON  an array of objects with those keys, or the reference's [[k, d, eps], ...]
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "ember/analysis/packing_simulation.h"

namespace ember {

std::string points_csv(const std::vector<PackingPoint>& points);
std::string points_json(const std::vector<PackingPoint>& points);
// Writes CSV or JSON by the file's extension (.csv / .json), atomically.
void write_points(const std::filesystem::path& path, const std::vector<PackingPoint>& points);
// Throws DataError naming the file and line (or entry) of a malformed point.
std::vector<PackingPoint> read_points(const std::filesystem::path& path);

}  // namespace ember
