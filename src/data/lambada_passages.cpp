#include "ember/data/lambada_passages.h"

#include <cctype>
#include <set>
#include <sstream>
#include <string_view>

#include "ember/data/pretokenizer.h"

namespace ember {

namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Bytes of the closing quote or bracket at text[i] (0: none): ASCII " ' ) ] } and the typographic
// ” ’ » ›, which may follow a sentence's final . ! ?
size_t closer_at(const std::string& text, size_t i) {
  static const char* const closers[] = {"\"", "'", ")", "]", "}", "\u201d", "\u2019", "\u00bb", "\u203a"};
  for (const char* c : closers)
    if (text.compare(i, std::char_traits<char>::length(c), c) == 0) return std::char_traits<char>::length(c);
  return 0;
}

std::vector<std::string> words_of(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Where a word's letters (Unicode letters and marks) begin and end, and whether they are one run:
// "“Harry.”" -> [3, 8), one run; "don't" -> two runs.
struct LetterCore {
  size_t begin = 0, end = 0;
  bool one_run = false;
};
LetterCore letter_core(const std::string& w) {
  static const PreTokenizer runs(R"([\p{L}\p{M}]+|[^\p{L}\p{M}]+)");
  static const PreTokenizer letters(R"([\p{L}\p{M}]+)");
  LetterCore core;
  int letter_runs = 0;
  size_t at = 0;
  runs.split(w, [&](std::string_view piece) {
    if (letters.full_match(piece)) {
      if (letter_runs++ == 0) core.begin = at;
      core.end = at + piece.size();
    }
    at += piece.size();
  });
  core.one_run = letter_runs == 1;
  return core;
}

// The word without surrounding punctuation, lower-cased (ASCII); empty unless it is all letters.
std::string bare_word(const std::string& w) {
  const auto core = letter_core(w);
  if (!core.one_run) return {};
  std::string out = w.substr(core.begin, core.end - core.begin);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The passage made of `sentences` as an item, if its final word qualifies.
bool make_item(const std::vector<std::string>& sentences, const LambadaBuildOptions& o, LambadaPassage& out) {
  std::string joined;
  for (const auto& s : sentences) joined += (joined.empty() ? "" : " ") + s;
  const auto words = words_of(joined);
  if (static_cast<int64_t>(words.size()) < o.min_words || static_cast<int64_t>(words.size()) > o.max_words)
    return false;
  const std::string& last = words.back();
  const std::string target = bare_word(last);
  if (target.size() < 3) return false;
  const auto core = letter_core(last);  // cut the trailing punctuation: the text ends with the target
  if (o.require_in_context) {
    std::set<std::string> seen;
    for (size_t i = 0; i + 1 < words.size(); ++i) seen.insert(bare_word(words[i]));
    if (!seen.count(target)) return false;
  }
  std::string context;
  for (size_t i = 0; i + 1 < words.size(); ++i) context += (context.empty() ? "" : " ") + words[i];
  // An opening quote stays: eval scores the text's whole last word, so the target is that word.
  out = {context + " " + last.substr(0, core.end), last.substr(0, core.end)};
  return true;
}

}  // namespace

std::vector<std::string> split_sentences(const std::string& text) {
  std::vector<std::string> out;
  std::string current;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (is_space(c)) {
      if (!current.empty() && current.back() != ' ') current.push_back(' ');
      continue;
    }
    current.push_back(c);
    if (c != '.' && c != '!' && c != '?') continue;
    size_t j = i + 1;
    for (size_t n; j < text.size() && (n = closer_at(text, j)) > 0; j += n) current.append(text, j, n);
    i = j - 1;
    if (j < text.size() && !is_space(text[j])) continue;  // "3.5", "e.g.x": not an end
    out.push_back(current);
    current.clear();
  }
  while (!current.empty() && current.back() == ' ') current.pop_back();
  if (!current.empty()) out.push_back(current);
  for (auto& s : out)
    if (!s.empty() && s.front() == ' ') s.erase(0, 1);
  return out;
}

std::vector<LambadaPassage> lambada_passages(const std::string& text, const LambadaBuildOptions& o) {
  const auto sentences = split_sentences(text);
  std::vector<LambadaPassage> out;
  size_t start = 0;
  while (start < sentences.size()) {
    bool found = false;
    int64_t words = 0;
    for (size_t end = start; end < sentences.size() && words <= o.max_words; ++end) {
      words += static_cast<int64_t>(words_of(sentences[end]).size());
      LambadaPassage item;
      const std::vector<std::string> span(sentences.begin() + static_cast<std::ptrdiff_t>(start),
                                          sentences.begin() + static_cast<std::ptrdiff_t>(end) + 1);
      if (words >= o.min_words && make_item(span, o, item)) {
        out.push_back(std::move(item));
        start = end + 1;
        found = true;
        break;
      }
    }
    if (!found) ++start;  // no passage starts at this sentence: try the next
  }
  return out;
}

}  // namespace ember
