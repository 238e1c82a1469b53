// LAMBADA-style items from any narrative text (docs/experiments.md, "Tasks"): passages of whole
// sentences, min_words..max_words long, whose final word is the target. LAMBADA kept passages whose
// last word people could guess only from the whole passage; the automatic stand-in here is that the
// target (3+ letters, case-insensitive) already occurs in the passage before it. The item's text
// ends with the target, its trailing punctuation removed, as `ember eval --task lambada` reads it.
// Letters are Unicode letters and marks; typographic quotes, dashes and the like are punctuation.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ember {

struct LambadaBuildOptions {
  int64_t min_words = 50;  // context and target together
  int64_t max_words = 150;
  bool require_in_context = true;  // false: any final word of 3+ letters
};

struct LambadaPassage {
  std::string text;    // context + " " + target
  std::string target;  // the final word as eval scores it (an opening quote stays)
};

// Sentences end at . ! ? (with any closing quotes or brackets) before whitespace, whatever follows
// (so lower-cased corpora split too; "Yes!" he said. is two pieces); whitespace runs (newlines
// included) become one space. Passages do not overlap and follow the text's order.
std::vector<LambadaPassage> lambada_passages(const std::string& text, const LambadaBuildOptions& options);

// Sentences of `text` as the builder sees them (for tests).
std::vector<std::string> split_sentences(const std::string& text);

}  // namespace ember
