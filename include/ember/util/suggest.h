// "Did you mean" suggestions for unknown names (edit distance).
#pragma once
#include <string>
#include <vector>

namespace ember {

size_t edit_distance(const std::string& a, const std::string& b);
// The closest candidate within a small distance, or "" when none is close.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace ember
