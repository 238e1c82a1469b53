#include "ember/model/kernel_table.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <torch/version.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>

#include "ember/util/cache_dir.h"
#include "ember/util/error.h"
#include "ember/util/files.h"
#include "ember/util/log.h"
#include "ember/util/sha256.h"
#include "kernels/device_name.h"

namespace ember {
namespace {

using kernels::Op;
using kernels::Path;

// This build of ember: its version and the file its code was loaded from (the program, or the
// Python operators' library), by size and modification time, so a rebuild is a new key.
std::string ember_build() {
  Dl_info info{};
  std::string file = "unknown";
  if (dladdr(reinterpret_cast<void*>(&kernel_table_key), &info) && info.dli_fname) file = info.dli_fname;
  struct stat st {};
  if (::stat(file.c_str(), &st) == 0)
    return fmt::format("ember 0.1.0 {} {} bytes @ {}.{:09}", file, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
  return "ember 0.1.0 " + file;
}

nlohmann::json row_json(const KernelCheckRow& r) {
  return {{"op", kernels::op_name(r.op)}, {"agrees", r.agrees},
          {"error", std::isfinite(r.error) ? nlohmann::json(r.error) : nlohmann::json("inf")},
          {"worst", r.worst}, {"fused_ms", r.fused_ms}, {"aten_ms", r.aten_ms}, {"choice", enum_name(r.choice)}};
}

Op op_named(const std::string& name) {
  for (Op op : kernels::kAllOps)
    if (name == kernels::op_name(op)) return op;
  throw Error("unknown op '" + name + "'");
}

KernelCheckRow row_from_json(const nlohmann::json& j) {
  KernelCheckRow r;
  r.op = op_named(j.at("op").get<std::string>());
  r.agrees = j.at("agrees").get<bool>();
  r.error = j.at("error").is_string() ? INFINITY : j.at("error").get<double>();
  r.worst = j.at("worst").get<std::string>();
  r.fused_ms = j.at("fused_ms").get<double>();
  r.aten_ms = j.at("aten_ms").get<double>();
  if (!enum_from_name(j.at("choice").get<std::string>(), r.choice) || r.choice == Path::automatic)
    throw Error("bad choice");
  return r;
}

// The cached table for `key` in `file`, or nullopt (with the reason) when it does not read back whole.
std::optional<KernelTable> read_cached(const fs::path& file, const std::string& key, std::string& why) {
  if (!fs::exists(file)) return std::nullopt;
  try {
    const auto j = nlohmann::json::parse(read_text_file(file));
    KernelTable t{j.at("key").get<std::string>(), {}, file.string()};
    if (t.key != key) throw Error("it holds another key");
    for (const auto& r : j.at("rows")) t.rows.push_back(row_from_json(r));
    for (size_t i = 0; i < kernels::kAllOps.size(); ++i)
      if (i >= t.rows.size() || t.rows[i].op != kernels::kAllOps[i]) throw Error("it lacks an op");
    return t;
  } catch (const std::exception& e) {
    why = e.what();
    return std::nullopt;
  }
}

fs::path cache_file(const std::string& key) { return kernel_cache_dir() / (sha256_hex(key).substr(0, 24) + ".json"); }

// Writes t as `file`: with `replace`, over what is there; else only if there is none, so that
// processes that checked side by side all take the first table written (hard links are atomic).
// Returns the table the file holds afterwards.
KernelTable store(const fs::path& file, KernelTable t, bool replace) {
  try {
    fs::create_directories(file.parent_path());
    const auto tmp = file.string() + fmt::format(".{}.tmp", ::getpid());
    write_file_atomic(tmp, kernel_table_json(t).dump(2) + "\n");
    if (replace) {
      fs::rename(tmp, file);
      return t;
    }
    const bool first = ::link(tmp.c_str(), file.c_str()) == 0;
    fs::remove(tmp);
    std::string why;
    if (!first)
      if (auto theirs = read_cached(file, t.key, why)) return *theirs;
  } catch (const std::exception& e) {
    log::warn("kernel check: cannot write the cache {} ({}); the check runs again next time", file.string(), e.what());
  }
  return t;
}

}  // namespace

const KernelCheckRow& KernelTable::row(Op op) const {
  for (const auto& r : rows)
    if (r.op == op) return r;
  throw Error(fmt::format("the kernel table has no row for {}", kernels::op_name(op)));
}

bool KernelTable::all_agree() const {
  for (const auto& r : rows)
    if (!r.agrees) return false;
  return true;
}

std::string kernel_table_key(const at::Device& device, bool bf16) {
  return fmt::format("{} | torch {}.{}.{} | {} | {}", kernels::device_name(device), TORCH_VERSION_MAJOR,
                     TORCH_VERSION_MINOR, TORCH_VERSION_PATCH, ember_build(), bf16 ? "bf16" : "fp32");
}

fs::path kernel_cache_dir() { return user_cache_dir("kernels"); }

std::optional<KernelTable> cached_kernel_table(const at::Device& device, bool bf16) {
  const auto key = kernel_table_key(device, bf16);
  const auto file = cache_file(key);
  std::string why;
  auto cached = read_cached(file, key, why);
  if (!why.empty()) log::warn("kernel check: the cache file {} does not read back ({}); checking again", file.string(), why);
  return cached;
}

KernelTable kernel_table(const at::Device& device, bool bf16, CacheUse use) {
  const auto key = kernel_table_key(device, bf16);
  const auto file = cache_file(key);
  std::string why;  // why a cache file there did not read back: it is rewritten
  if (use == CacheUse::read) {
    if (auto cached = read_cached(file, key, why)) return *cached;
    if (!why.empty()) log::warn("kernel check: the cache file {} does not read back ({}); checking again", file.string(), why);
  }
  const bool corrupt = !why.empty();
  KernelTable fresh{key, check_kernels(device, bf16), "checked now"};
  const auto kept = store(file, fresh, use == CacheUse::replace || corrupt);
  return use == CacheUse::check ? fresh : kept;
}

kernels::Choices resolve_kernels(const kernels::Choices& asked, const KernelTable* table) {
  kernels::Choices out = asked;
  for (Op op : kernels::kAllOps) {
    if (asked[op] != Path::automatic) continue;
    if (!table) throw Error(fmt::format("kernels.{} = auto needs the kernel check's table", kernels::op_name(op)));
    const auto& r = table->row(op);
    if (!r.agrees)
      log::warn("kernels.{}: ember's fused kernel disagrees with ATen on {} ({} off by {:.3g} of its tolerance); "
                "using ATen's ops",
                kernels::op_name(op), table->key.substr(0, table->key.find(" | ")), r.worst, r.error);
    out[op] = r.choice;
  }
  return out;
}

std::string describe_choices(const kernels::Choices& choices) {
  std::string s;
  for (Op op : kernels::kAllOps) s += fmt::format("{}{}={}", s.empty() ? "" : " ", kernels::op_name(op), enum_name(choices[op]));
  return s;
}

std::vector<std::string> changed_choices(const kernels::Choices& before, const kernels::Choices& after) {
  std::vector<std::string> out;
  for (Op op : kernels::kAllOps)
    if (before[op] != after[op])
      out.push_back(fmt::format("{} {} -> {}", kernels::op_name(op), enum_name(before[op]), enum_name(after[op])));
  return out;
}

std::string format_kernel_table(const KernelTable& t) {
  std::string s = fmt::format("{}\n({})\n{:<12} {:>8} {:>10} {:>10} {:>10}  {}\n", t.key, t.source, "op", "agrees",
                              "error", "fused ms", "aten ms", "choice");
  for (const auto& r : t.rows)
    s += fmt::format("{:<12} {:>8} {:>10.3g} {:>10.3f} {:>10.3f}  {}{}\n", kernels::op_name(r.op), r.agrees ? "yes" : "NO",
                     r.error, r.fused_ms, r.aten_ms, enum_name(r.choice),
                     r.agrees ? "" : fmt::format("  (worst: {})", r.worst));
  return s;
}

nlohmann::json kernel_table_json(const KernelTable& t) {
  auto rows = nlohmann::json::array();
  for (const auto& r : t.rows) rows.push_back(row_json(r));
  return {{"key", t.key}, {"source", t.source}, {"rows", rows}};
}

nlohmann::json choices_json(const kernels::Choices& choices) {
  nlohmann::json j = nlohmann::json::object();
  for (Op op : kernels::kAllOps) j[kernels::op_name(op)] = enum_name(choices[op]);
  return j;
}

std::optional<kernels::Choices> choices_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  kernels::Choices c;
  for (Op op : kernels::kAllOps) {
    const auto it = j.find(kernels::op_name(op));
    if (it == j.end() || !it->is_string() || !enum_from_name(it->get<std::string>(), c[op])) return std::nullopt;
  }
  return c;
}

}  // namespace ember
