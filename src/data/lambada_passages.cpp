#include "ember/data/lambada_passages.h"

#include <cctype>
#include <set>
#include <sstream>

namespace ember {

namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool is_closer(char c) { return c == '"' || c == '\'' || c == ')' || c == ']' || c == '}'; }
bool is_letter(unsigned char c) { return std::isalpha(c) || c >= 0x80; }  // UTF-8 letters count

std::vector<std::string> words_of(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The word without surrounding punctuation, lower-cased (ASCII); empty unless it is all letters.
std::string bare_word(const std::string& w) {
  size_t a = 0, b = w.size();
  while (a < b && !is_letter(static_cast<unsigned char>(w[a]))) ++a;
  while (b > a && !is_letter(static_cast<unsigned char>(w[b - 1]))) --b;
  std::string out;
  for (size_t i = a; i < b; ++i) {
    if (!is_letter(static_cast<unsigned char>(w[i]))) return {};
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(w[i]))));
  }
  return out;
}

// The passage made of `sentences` as an item, if its final word qualifies.
bool make_item(const std::vector<std::string>& sentences, const LambadaBuildOptions& o, LambadaPassage& out) {
  std::string joined;
  for (const auto& s : sentences) joined += (joined.empty() ? "" : " ") + s;
  const auto words = words_of(joined);
  if (static_cast<int64_t>(words.size()) < o.min_words || static_cast<int64_t>(words.size()) > o.max_words) return false;
  const std::string& last = words.back();
  const std::string target = bare_word(last);
  if (target.size() < 3) return false;
  size_t end = last.size();  // cut the trailing punctuation: the text ends with the target
  while (end > 0 && !is_letter(static_cast<unsigned char>(last[end - 1]))) --end;
  size_t begin = 0;
  while (begin < end && !is_letter(static_cast<unsigned char>(last[begin]))) ++begin;
  if (o.require_in_context) {
    std::set<std::string> seen;
    for (size_t i = 0; i + 1 < words.size(); ++i) seen.insert(bare_word(words[i]));
    if (!seen.count(target)) return false;
  }
  std::string context;
  for (size_t i = 0; i + 1 < words.size(); ++i) context += (context.empty() ? "" : " ") + words[i];
  out = {context + " " + last.substr(0, end), last.substr(begin, end - begin)};
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
    while (j < text.size() && is_closer(text[j])) current.push_back(text[j++]);
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
