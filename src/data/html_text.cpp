#include <cctype>
#include <cstdint>
#include <string>

#include "ember/data/html_text.h"

namespace ember {
namespace {

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x110000) {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Decodes the entity at html[i] ('&'); returns the characters consumed (0: not an entity).
size_t decode_entity(const std::string& html, size_t i, std::string& out) {
  const size_t semi = html.find(';', i);
  if (semi == std::string::npos || semi - i > 10) return 0;
  const std::string e = html.substr(i + 1, semi - i - 1);
  static const std::pair<const char*, const char*> named[] = {
      {"amp", "&"},        {"lt", "<"},         {"gt", ">"},         {"quot", "\""},       {"apos", "'"},
      {"nbsp", " "},       {"mdash", "\u2014"}, {"ndash", "\u2013"}, {"hellip", "\u2026"}, {"rsquo", "\u2019"},
      {"lsquo", "\u2018"}, {"rdquo", "\u201d"}, {"ldquo", "\u201c"}, {"copy", "\u00a9"}};
  for (const auto& [n, v] : named)
    if (e == n) return out += v, semi - i + 1;
  if (e.size() > 1 && e[0] == '#') {
    const bool hex = e[1] == 'x' || e[1] == 'X';
    const std::string digits = e.substr(hex ? 2 : 1);
    if (digits.empty() || digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") != std::string::npos)
      return 0;
    append_utf8(out, static_cast<uint32_t>(std::stoul(digits, nullptr, hex ? 16 : 10)));
    return semi - i + 1;
  }
  return 0;
}

bool starts_with_ci(const std::string& s, size_t i, const std::string& word) {
  for (size_t k = 0; k < word.size(); ++k)
    if (i + k >= s.size() || std::tolower(static_cast<unsigned char>(s[i + k])) != word[k]) return false;
  return true;
}

// Where the lower-case `word` next occurs in s from `from`, in any case (npos: nowhere).
size_t find_ci(const std::string& s, const std::string& word, size_t from) {
  for (size_t i = from; i + word.size() <= s.size(); ++i)
    if (starts_with_ci(s, i, word)) return i;
  return std::string::npos;
}

// The lower-cased name of the tag that starts at html[i] (after '<', maybe '/'): "header", not "head".
std::string tag_name(const std::string& html, size_t i) {
  if (i < html.size() && html[i] == '/') ++i;
  size_t j = i;
  while (j < html.size() && std::isalnum(static_cast<unsigned char>(html[j]))) ++j;
  std::string name = html.substr(i, j - i);
  for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

// Whether the tag whose name starts at html[i] (after '<', maybe '/') breaks a block of text.
bool is_block_tag(const std::string& html, size_t i) {
  const std::string name = tag_name(html, i);
  static const char* blocks[] = {"p",  "div", "br", "li", "ul",         "ol",      "dl",   "dt",
                                 "dd", "tr",  "td", "th", "table",      "pre",     "h1",   "h2",
                                 "h3", "h4",  "h5", "h6", "blockquote", "section", "title"};
  for (const char* b : blocks)
    if (name == b) return true;
  return false;
}

// Collapses runs of spaces and keeps at most one blank line between blocks.
std::string tidy(const std::string& raw) {
  std::string out;
  int newlines = 0;
  bool space = false;
  for (const char c : raw) {
    if (c == '\n') {
      ++newlines;
      space = false;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      space = true;
    } else {
      if (!out.empty()) out += newlines >= 2 ? "\n\n" : newlines == 1 ? "\n" : space ? " " : "";
      out += c;
      newlines = 0;
      space = false;
    }
  }
  return out.empty() ? out : out + "\n";
}

}  // namespace

std::string html_to_text(const std::string& html) {
  std::string raw;
  size_t i = 0;
  while (i < html.size()) {
    const char c = html[i];
    if (c == '<') {
      const std::string name = tag_name(html, i + 1);
      if (html[i + 1] != '/' && (name == "script" || name == "style" || name == "head")) {
        const size_t close = find_ci(html, "</" + name, i);  // <SCRIPT> ... </SCRIPT> too
        i = close == std::string::npos ? html.size() : close;
      }
      const size_t end = html.find('>', i);
      const bool block = is_block_tag(html, i + 1);
      raw += block ? "\n\n" : "";
      i = end == std::string::npos ? html.size() : end + 1;
    } else if (c == '&') {
      const size_t n = decode_entity(html, i, raw);
      if (n == 0) raw += c;
      i += n ? n : 1;
    } else {
      raw += c == '\n' ? ' ' : c;
      ++i;
    }
  }
  return tidy(raw);
}

}  // namespace ember
