#include "ember/analysis/packing_points.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <sstream>

#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember {
namespace {

const char* kColumns[] = {"kind", "k", "d", "eps", "iterations", "exponent", "lr", "seconds"};

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, sep)) {
    while (!cell.empty() && (cell.back() == '\r' || cell.back() == ' ')) cell.pop_back();
    while (!cell.empty() && cell.front() == ' ') cell.erase(cell.begin());
    out.push_back(cell);
  }
  return out;
}

PackingKind kind_of(const std::string& name, const std::string& where) {
  PackingKind kind{};
  if (!enum_from_name(name, kind))
    throw DataError(fmt::format("{}: unknown packing kind '{}' (expected random, optimised or none)", where, name));
  return kind;
}

void check(const PackingPoint& p, const std::string& where) {
  if (p.k < 1 || p.d < 1 || !std::isfinite(p.eps) || p.eps < 0)
    throw DataError(
        fmt::format("{}: expected k >= 1, d >= 1 and a finite eps >= 0, got k={} d={} eps={}", where, p.k, p.d, p.eps));
}

std::vector<PackingPoint> parse_csv(const std::string& text, const std::string& file) {
  std::stringstream in(text);
  std::string line;
  std::getline(in, line);
  std::map<std::string, size_t> col;
  const auto header = split(line, ',');
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  for (const char* need : {"k", "d", "eps"})
    if (!col.count(need))
      throw DataError(fmt::format("{}: the CSV header lacks column '{}' (expected {})", file, need,
                                  "kind,k,d,eps,iterations,exponent,lr,seconds"));
  std::vector<PackingPoint> out;
  for (int line_no = 2; std::getline(in, line); ++line_no) {
    if (line.find_first_not_of(" \r") == std::string::npos) continue;
    const auto cells = split(line, ',');
    const std::string where = fmt::format("{}:{}", file, line_no);
    auto get = [&](const std::string& name) -> std::string {
      return col.count(name) && col[name] < cells.size() ? cells[col[name]] : "";
    };
    PackingPoint p;
    std::string kind;
    try {
      kind = get("kind");
      p.k = std::stoll(get("k"));
      p.d = std::stoll(get("d"));
      p.eps = std::stod(get("eps"));
      if (!get("iterations").empty()) p.iterations = std::stoll(get("iterations"));
      if (!get("exponent").empty()) p.exponent = std::stoi(get("exponent"));
      if (!get("lr").empty()) p.lr = std::stod(get("lr"));
      if (!get("seconds").empty()) p.seconds = std::stod(get("seconds"));
    } catch (const std::exception&) {
      throw DataError(fmt::format("{}: cannot parse '{}' as kind,k,d,eps,...", where, line));
    }
    p.kind = kind_of(kind, where);
    check(p, where);
    out.push_back(p);
  }
  return out;
}

PackingPoint point_from_json(const nlohmann::json& j, const std::string& where) {
  PackingPoint p;
  if (j.is_array()) {  // the reference's [k, d, eps]
    if (j.size() != 3) throw DataError(where + ": expected [k, d, eps]");
    p.k = j[0].get<int64_t>(), p.d = j[1].get<int64_t>(), p.eps = j[2].get<double>();
    return p;
  }
  p.kind = kind_of(j.value("kind", ""), where);
  p.k = j.at("k").get<int64_t>();
  p.d = j.at("d").get<int64_t>();
  p.eps = j.at("eps").get<double>();
  p.iterations = j.value("iterations", int64_t{0});
  p.exponent = j.value("exponent", 0);
  p.lr = j.value("lr", 0.0);
  p.seconds = j.value("seconds", 0.0);
  return p;
}

std::vector<PackingPoint> parse_json(const std::string& text, const std::string& file) {
  std::vector<PackingPoint> out;
  try {
    const auto doc = nlohmann::json::parse(text);
    if (!doc.is_array()) throw DataError(file + ": expected a JSON array of points");
    for (size_t i = 0; i < doc.size(); ++i) {
      const std::string where = fmt::format("{}: point {}", file, i);
      out.push_back(point_from_json(doc[i], where));
      check(out.back(), where);
    }
  } catch (const nlohmann::json::exception& e) {
    throw DataError(fmt::format("{}: not a list of packing points ({})", file, e.what()));
  }
  return out;
}

}  // namespace

std::string points_csv(const std::vector<PackingPoint>& points) {
  std::string out = fmt::format("{}\n", fmt::join(std::begin(kColumns), std::end(kColumns), ","));
  for (const auto& p : points)
    out += fmt::format("{},{},{},{:.9g},{},{},{},{:.3f}\n", enum_name(p.kind), p.k, p.d, p.eps, p.iterations, p.exponent, p.lr,
                       p.seconds);
  return out;
}

std::string points_json(const std::vector<PackingPoint>& points) {
  auto doc = nlohmann::json::array();
  for (const auto& p : points)
    doc.push_back({{"kind", enum_name(p.kind)},
                   {"k", p.k},
                   {"d", p.d},
                   {"eps", p.eps},
                   {"iterations", p.iterations},
                   {"exponent", p.exponent},
                   {"lr", p.lr},
                   {"seconds", p.seconds}});
  return doc.dump(1) + "\n";
}

void write_points(const std::filesystem::path& path, const std::vector<PackingPoint>& points) {
  const auto ext = path.extension().string();
  if (ext != ".csv" && ext != ".json")
    throw UsageError("--out '" + path.string() + "': expected a .csv or .json file name");
  write_file_atomic(path, ext == ".csv" ? points_csv(points) : points_json(points));
}

std::vector<PackingPoint> read_points(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path)) throw DataError("'" + path.string() + "' does not exist");
  const std::string text = read_text_file(path);
  auto points = path.extension() == ".json" ? parse_json(text, path.string()) : parse_csv(text, path.string());
  if (points.empty()) throw DataError(path.string() + ": holds no packing points");
  return points;
}

}  // namespace ember
