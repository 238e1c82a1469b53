#include "ember/data/tokenizer.h"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <limits>
#include <queue>

#include "ember/util/error.h"
#include "ember/util/files.h"
#include "ember/util/sha256.h"

namespace ember {
namespace {

constexpr uint32_t kNoRank = std::numeric_limits<uint32_t>::max();

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool base64_decode(std::string_view in, std::string& out) {
  out.clear();
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    const int v = base64_value(c);
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return !out.empty();
}

std::string base64_encode(std::string_view in) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t v = (uint32_t(uint8_t(in[i])) << 16) | (uint32_t(uint8_t(in[i + 1])) << 8) | uint8_t(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out.push_back(kAlphabet[(v >> s) & 63]);
  }
  if (i < in.size()) {
    uint32_t v = uint32_t(uint8_t(in[i])) << 16;
    if (i + 1 < in.size()) v |= uint32_t(uint8_t(in[i + 1])) << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

// Per-thread cache of piece -> ids, for the tokenizer that used it last (by instance id, not
// address: a new tokenizer may reuse a destroyed one's address).
struct PieceCache {
  uint64_t owner = 0;
  std::unordered_map<std::string, std::vector<uint32_t>> map;
};
constexpr size_t kMaxCachedPieces = 1 << 17;
constexpr size_t kLongPiece = 128;  // longer pieces merge through a heap instead of rescans

}  // namespace

std::vector<std::pair<std::string, uint32_t>> read_rank_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw DataError("tokenizer: cannot read rank file '" + file.string() + "'");
  std::vector<std::pair<std::string, uint32_t>> ranks;
  std::string line, bytes;
  for (size_t lineno = 1; std::getline(in, line); ++lineno) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const size_t sp = line.find(' ');
    char* end = nullptr;
    const unsigned long long rank = sp == std::string::npos ? 0 : std::strtoull(line.c_str() + sp + 1, &end, 10);
    if (sp == std::string::npos || end == line.c_str() + sp + 1 || *end != '\0' || rank >= kNoRank ||
        !base64_decode(std::string_view(line).substr(0, sp), bytes))
      throw DataError("tokenizer: " + file.string() + ":" + std::to_string(lineno) +
                      ": expected 'base64(token bytes) rank'");
    ranks.emplace_back(bytes, static_cast<uint32_t>(rank));
  }
  if (ranks.empty()) throw DataError("tokenizer: rank file '" + file.string() + "' is empty");
  return ranks;
}

void write_rank_file(const std::filesystem::path& file, const std::vector<std::string>& tokens) {
  std::string text;
  for (size_t i = 0; i < tokens.size(); ++i) text += base64_encode(tokens[i]) + " " + std::to_string(i) + "\n";
  write_file_atomic(file, text);
}

Tokenizer::Tokenizer(const TokenizerSpec& spec) : spec_(spec), pre_(spec.pattern) {
  static std::atomic<uint64_t> next_instance{1};
  instance_id_ = next_instance++;
  load_ranks(spec.ranks_file);
  int64_t max_id = static_cast<int64_t>(id_to_bytes_.size()) - 1;
  for (const auto& [text, id] : spec_.specials) {
    if (id < id_to_bytes_.size() && !id_to_bytes_[id].empty())
      throw DataError("tokenizer: special token '" + text + "' reuses rank " + std::to_string(id));
    max_id = std::max<int64_t>(max_id, id);
  }
  vocab_size_ = std::max<int64_t>(spec_.n_vocab, max_id + 1);
  std::string h = sha256_file_hex(spec.ranks_file) + "\n" + spec_.pattern + "\n";
  for (const auto& [text, id] : spec_.specials) h += text + " " + std::to_string(id) + "\n";
  hash_ = sha256_hex(h);
}

Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

void Tokenizer::load_ranks(const std::filesystem::path& file) {
  auto ranks = read_rank_file(file);
  uint32_t max_rank = 0;
  size_t total = 0;
  for (const auto& [bytes, rank] : ranks) {
    max_rank = std::max(max_rank, rank);
    total += bytes.size();
  }
  // Published rank files number their tokens 0..n-1; a table indexed by rank must not be asked for
  // billions of empty slots by a file of a few lines ("a 4294967000").
  if (size_t(max_rank) >= 2 * ranks.size())
    throw DataError("tokenizer: " + file.string() + ": ranks run to " + std::to_string(max_rank) + " for " +
                    std::to_string(ranks.size()) + " tokens (a rank file numbers its tokens 0..n-1, " +
                    "with at most as many gaps as tokens)");
  arena_.reserve(total);
  std::vector<size_t> offsets;
  offsets.reserve(ranks.size());
  for (const auto& r : ranks) {
    offsets.push_back(arena_.size());
    arena_ += r.first;
  }
  id_to_bytes_.assign(size_t(max_rank) + 1, std::string_view());
  ranks_.reserve(ranks.size() * 2);
  for (size_t i = 0; i < ranks.size(); ++i) {
    const std::string_view bytes(arena_.data() + offsets[i], ranks[i].first.size());
    const uint32_t rank = ranks[i].second;
    if (!id_to_bytes_[rank].empty() || !ranks_.emplace(bytes, rank).second)
      throw DataError("tokenizer: " + file.string() + ": duplicate rank or token at rank " + std::to_string(rank));
    id_to_bytes_[rank] = bytes;
  }
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    byte_rank_[b] = rank_of(std::string_view(&c, 1));
    if (byte_rank_[b] == kNoRank)
      throw DataError("tokenizer: " + file.string() + ": byte " + std::to_string(b) +
                      " has no rank (a byte-level BPE needs all 256 single bytes)");
  }
}

uint32_t Tokenizer::rank_of(std::string_view bytes) const {
  const auto it = ranks_.find(bytes);
  return it == ranks_.end() ? kNoRank : it->second;
}

// Byte-pair merge of one piece: parts[i] starts a token; rank[i] is the rank of the token that
// merging parts i and i+1 would make. Merge the lowest until no merge has a rank.
void Tokenizer::merge_pairs(std::string_view piece, std::vector<uint32_t>& out) const {
  const size_t n = piece.size();
  std::vector<size_t> start(n + 1);
  std::vector<uint32_t> rank(n + 1, kNoRank);
  for (size_t i = 0; i <= n; ++i) start[i] = i;
  auto pair_rank = [&](size_t i) {  // rank of parts i..i+1 merged, with start[] current
    if (i + 2 >= start.size()) return kNoRank;
    return rank_of(piece.substr(start[i], start[i + 2] - start[i]));
  };
  for (size_t i = 0; i + 1 < n; ++i) rank[i] = pair_rank(i);
  while (start.size() > 2) {
    size_t best = 0;
    uint32_t best_rank = kNoRank;
    for (size_t i = 0; i + 2 < start.size(); ++i)
      if (rank[i] < best_rank) best_rank = rank[i], best = i;
    if (best_rank == kNoRank) break;
    start.erase(start.begin() + best + 1);
    rank.erase(rank.begin() + best + 1);
    rank[best] = pair_rank(best);
    if (best > 0) rank[best - 1] = pair_rank(best - 1);
  }
  for (size_t i = 0; i + 1 < start.size(); ++i) out.push_back(rank_of(piece.substr(start[i], start[i + 1] - start[i])));
}

// The same merge order for long pieces (e.g. whitespace runs) in O(n log n): a heap of candidate
// pairs keyed by (rank, start), parts kept as a linked list; stale candidates are skipped.
void Tokenizer::merge_pairs_long(std::string_view piece, std::vector<uint32_t>& out) const {
  const size_t n = piece.size();
  struct Candidate {
    uint32_t rank;
    size_t start, end;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : start > o.start; }
  };
  std::vector<size_t> next(n), prev(n);
  std::vector<char> alive(n, 1);
  for (size_t i = 0; i < n; ++i) next[i] = i + 1, prev[i] = i - 1;  // prev[0] unused
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
  auto push = [&](size_t start, size_t end) {
    const uint32_t r = rank_of(piece.substr(start, end - start));
    if (r != kNoRank) heap.push({r, start, end});
  };
  for (size_t i = 0; i + 1 < n; ++i) push(i, i + 2);
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    if (!alive[c.start] || next[c.start] >= n || next[next[c.start]] != c.end) continue;  // stale
    const size_t gone = next[c.start];
    alive[gone] = 0;
    next[c.start] = c.end;
    if (c.end < n) prev[c.end] = c.start;
    if (c.start > 0) push(prev[c.start], c.end);
    if (c.end < n) push(c.start, next[c.end]);
  }
  for (size_t i = 0; i < n; i = next[i]) out.push_back(rank_of(piece.substr(i, next[i] - i)));
}

void Tokenizer::encode_piece(std::string_view piece, std::vector<uint32_t>& out) const {
  if (piece.size() == 1) {
    out.push_back(byte_rank_[static_cast<uint8_t>(piece[0])]);
    return;
  }
  if (const uint32_t r = rank_of(piece); r != kNoRank) {
    out.push_back(r);
    return;
  }
  thread_local PieceCache cache;
  if (cache.owner != instance_id_) {
    cache.map.clear();
    cache.owner = instance_id_;
  }
  const std::string key(piece);
  if (const auto it = cache.map.find(key); it != cache.map.end()) {
    out.insert(out.end(), it->second.begin(), it->second.end());
    return;
  }
  const size_t before = out.size();
  if (piece.size() > kLongPiece)
    merge_pairs_long(piece, out);
  else
    merge_pairs(piece, out);
  if (cache.map.size() >= kMaxCachedPieces) cache.map.clear();
  cache.map.emplace(key, std::vector<uint32_t>(out.begin() + long(before), out.end()));
}

void Tokenizer::encode_append(std::string_view text, std::vector<uint32_t>& out) const {
  pre_.split(text, [&](std::string_view piece) { encode_piece(piece, out); });
}

std::vector<uint32_t> Tokenizer::encode(std::string_view text) const {
  std::vector<uint32_t> out;
  out.reserve(text.size() / 3 + 1);
  encode_append(text, out);
  return out;
}

std::vector<uint32_t> Tokenizer::encode_with_specials(std::string_view text) const {
  // Next occurrence of each special token at or after pos, refreshed only when passed by.
  std::vector<std::pair<const std::string*, uint32_t>> present;
  std::vector<size_t> next_at;
  for (const auto& [sp, id] : spec_.specials)
    if (const size_t at = text.find(sp); at != std::string_view::npos) {
      present.emplace_back(&sp, id);
      next_at.push_back(at);
    }
  std::vector<uint32_t> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t best = std::string_view::npos, hit = 0;
    for (size_t k = 0; k < present.size(); ++k) {
      if (next_at[k] != std::string_view::npos && next_at[k] < pos) next_at[k] = text.find(*present[k].first, pos);
      const bool longer =
          next_at[k] == best && best != std::string_view::npos && present[k].first->size() > present[hit].first->size();
      if (next_at[k] < best || longer) best = next_at[k], hit = k;
    }
    if (best == std::string_view::npos) {
      encode_append(text.substr(pos), out);
      break;
    }
    encode_append(text.substr(pos, best - pos), out);
    out.push_back(present[hit].second);
    pos = best + present[hit].first->size();
  }
  return out;
}

std::string Tokenizer::decode(const std::vector<uint32_t>& ids) const {
  std::string text;
  for (const uint32_t id : ids) {
    if (id < id_to_bytes_.size() && !id_to_bytes_[id].empty()) {
      text += id_to_bytes_[id];
      continue;
    }
    const auto sp =
        std::find_if(spec_.specials.begin(), spec_.specials.end(), [&](const auto& s) { return s.second == id; });
    if (sp == spec_.specials.end())
      throw DataError("tokenizer: token id " + std::to_string(id) + " is not in the vocabulary of '" + spec_.name +
                      "' (size " + std::to_string(vocab_size_) + ")");
    text += sp->first;
  }
  return text;
}

bool Tokenizer::document_separator(uint32_t& id) const {
  for (const char* name : {"<|endoftext|>", "<|end_of_text|>"}) {
    const auto it = spec_.specials.find(name);
    if (it != spec_.specials.end()) {
      id = it->second;
      return true;
    }
  }
  return false;
}

}  // namespace ember
