// Task files for `ember eval --task`: multiple choice JSONL (HellaSwag / PIQA / ARC layout),
// LAMBADA JSONL or plain text, and associative-recall JSONL. The same bytes go to each reader;
// what a reader accepts must satisfy what its scorer relies on.
#include "ember/data/recall_task.h"
#include "ember/eval/task_scoring.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ember;
  const auto file = fuzz::input_file("task.jsonl", fuzz::as_text(data, size)).string();
  fuzz::expect_clean_errors([&] {
    for (const ChoiceItem& item : read_choice_items(file)) {
      fuzz::require(item.endings.size() == item.ending_chars.size(), "one length per ending");
      fuzz::require(item.label >= 0 && item.label < static_cast<int64_t>(item.endings.size()),
                    "the label indexes an ending");
    }
  });
  fuzz::expect_clean_errors([&] {
    for (const LambadaItem& item : read_lambada_items(file))
      fuzz::require(!item.target.empty(), "every passage has a target word");
  });
  fuzz::expect_clean_errors([&] {
    for (const RecallSequence& s : read_recall_items(file))
      for (int64_t a : s.answers)
        fuzz::require(a >= 1 && a < static_cast<int64_t>(s.tokens.size()), "answers lie inside the sequence");
  });
  return 0;
}
