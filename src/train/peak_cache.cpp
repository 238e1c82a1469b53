#include "ember/train/peak_cache.h"

#include <fmt/format.h>
#include <ATen/Parallel.h>
#include <torch/version.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "ember/train/peak_flops.h"
#include "ember/util/cache_dir.h"
#include "ember/util/files.h"
#include "ember/util/log.h"
#include "ember/util/sha256.h"
#include "kernels/device_name.h"

namespace ember {
namespace {

constexpr double kGlanceBudgetS = 0.0;  // 0: the two rounds measure_matmul_peak always takes

// The cached FLOP/s for `key`, or nullopt (with the reason in `why` when a file is there but does
// not read back as this key's).
std::optional<double> read_peak(const std::filesystem::path& file, const std::string& key, std::string& why) {
  if (!std::filesystem::exists(file)) return std::nullopt;
  try {
    const auto j = nlohmann::json::parse(read_text_file(file));
    if (j.at("key").get<std::string>() != key) throw std::runtime_error("it holds another key");
    const double flops = j.at("flops").get<double>();
    if (!(flops > 0)) throw std::runtime_error("its flops are not positive");
    return flops;
  } catch (const std::exception& e) {
    why = e.what();
    return std::nullopt;
  }
}

}  // namespace

std::string matmul_peak_key(const at::Device& device, at::ScalarType dtype) {
  // A CPU's peak grows with its intra-op threads; a GPU's does not depend on them.
  const std::string threads = device.is_cpu() ? fmt::format(" | {} threads", at::get_num_threads()) : "";
  return fmt::format("{} | {}{} | torch {}.{}.{}", kernels::device_name(device), c10::toString(dtype), threads,
                     TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR, TORCH_VERSION_PATCH);
}

std::filesystem::path matmul_peak_file(const at::Device& device, at::ScalarType dtype) {
  return user_cache_dir("peak") / (sha256_hex(matmul_peak_key(device, dtype)).substr(0, 24) + ".json");
}

void raise_cached_peak(const at::Device& device, at::ScalarType dtype, double flops) {
  const auto key = matmul_peak_key(device, dtype);
  const auto file = matmul_peak_file(device, dtype);
  std::string why;
  if (const auto cached = read_peak(file, key, why); cached && *cached >= flops) return;
  try {
    std::filesystem::create_directories(file.parent_path());
    const auto mine = std::filesystem::path(file.string() + fmt::format(".{}", ::getpid()));
    write_file_atomic(mine, nlohmann::json{{"key", key}, {"flops", flops}}.dump(2) + "\n");
    std::filesystem::rename(mine, file);  // processes side by side: the last one's, each a whole file
  } catch (const std::exception& e) {
    log::warn("matmul peak: cannot write the cache {} ({}); it is measured again next time", file.string(), e.what());
  }
}

MatmulPeak matmul_peak(const at::Device& device, at::ScalarType dtype, bool measure_now, double full_budget_s) {
  const auto file = matmul_peak_file(device, dtype);
  std::optional<double> cached;
  if (!measure_now) {
    std::string why;
    cached = read_peak(file, matmul_peak_key(device, dtype), why);
    if (!why.empty()) log::warn("matmul peak: the cache file {} does not read back ({}); measuring again", file.string(), why);
  }
  // With a cached peak, a glance (two rounds, ~0.1 s) that can only raise it: a cache written on
  // a busy machine does not stay low.
  const double flops = measure_matmul_peak(device, dtype, cached ? kGlanceBudgetS : full_budget_s);
  if (!cached || flops > *cached) {
    raise_cached_peak(device, dtype, flops);
    return {flops, "measured now"};
  }
  return {*cached, file.string()};
}

}  // namespace ember
