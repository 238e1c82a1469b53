// Byte-level tokens (V = 256): id = byte value, except NUL, which becomes a space, because id 0
// separates documents. `ember prepare bytes` and every analysis that reads text for a byte-level
// model use this one mapping.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

namespace ember {

constexpr uint32_t kByteDocumentSeparator = 0;
constexpr int64_t kByteVocabSize = 256;

void append_byte_tokens(std::string_view text, std::vector<uint32_t>& out);
std::vector<uint32_t> byte_tokens(std::string_view text);

}  // namespace ember
