#include "ember/data/byte_tokens.h"

namespace ember {

void append_byte_tokens(std::string_view text, std::vector<uint32_t>& out) {
  out.reserve(out.size() + text.size());
  for (unsigned char c : text) out.push_back(c == kByteDocumentSeparator ? uint32_t{' '} : uint32_t{c});
}

std::vector<uint32_t> byte_tokens(std::string_view text) {
  std::vector<uint32_t> out;
  append_byte_tokens(text, out);
  return out;
}

}  // namespace ember
