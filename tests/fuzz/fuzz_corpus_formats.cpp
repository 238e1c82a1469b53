// The corpus readers of `ember prepare text` (data/text_units.h): plain text, gzip and zstd JSONL
// and Parquet. The input's first byte picks the format, the rest is the file. Bad input ends in an
// ember::Error naming the file; a plain text file read as units gives back its bytes, in order, the
// last unit ending the document.
#include "ember/data/text_units.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ember;
  if (size == 0) return 0;
  static const char* const names[] = {"input.txt", "input.jsonl.gz", "input.jsonl.zst", "input.parquet",
                                      "input.txt.gz"};
  const auto bytes = fuzz::as_text(data + 1, size - 1);
  const std::vector<std::filesystem::path> docs{fuzz::input_file(names[data[0] % 5], bytes)};
  fuzz::expect_clean_errors([&] {
    TextUnitReader reader(docs, TextUnitOptions{0.5, "text", "text"});
    std::string text;
    TextUnit u;
    bool ended = false;
    while (reader.next(u)) {
      fuzz::require(u.source == 0, "a unit of the only document");
      text += u.text;
      ended = u.end_of_doc;
    }
    if (data[0] % 5 == 0) {
      fuzz::require(text == bytes, "a text file's units are its bytes, in order");
      fuzz::require(ended || bytes.empty(), "the last unit ends the document");
    }
  });
  return 0;
}
