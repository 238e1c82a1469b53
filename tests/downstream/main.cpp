// encode_preset NAME: UTF-8 text on stdin -> the preset's token ids on stdout, one line separated by
// spaces (as `ember tokenizer encode --preset NAME` prints them). An ember error is one line on
// stderr and exit 1.
#include <iostream>
#include <iterator>
#include <string>

#include "ember/data/tokenizer_presets.h"
#include "ember/util/error.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: encode_preset NAME < text\n";
    return 2;
  }
  try {
    const ember::Tokenizer tokenizer(ember::tokenizer_preset(argv[1]));
    const std::string text{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
    std::string out;
    for (uint32_t id : tokenizer.encode(text)) out += (out.empty() ? "" : " ") + std::to_string(id);
    std::cout << out << "\n";
  } catch (const ember::Error& e) {
    std::cerr << "encode_preset: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
