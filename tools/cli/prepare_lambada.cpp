// `ember prepare lambada`: a LAMBADA-style last-word task built from narrative text
// (data/lambada_passages.h), for `ember eval --task lambada`.
#include <nlohmann/json.hpp>

#include <iostream>

#include "cli/commands.h"
#include "ember/data/document_source.h"
#include "ember/data/lambada_passages.h"
#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember::cli {
namespace {

struct LambadaArgs {
  std::vector<std::string> inputs, extensions = {".txt", ".rst", ".md"};
  std::string out;
  LambadaBuildOptions options;
  bool any_final_word = false;
  int64_t limit = 0;
};

void run_prepare_lambada(LambadaArgs a) {
  if (a.options.min_words < 2 || a.options.max_words < a.options.min_words)
    throw UsageError("prepare lambada: need 2 <= --min-words <= --max-words");
  a.options.require_in_context = !a.any_final_word;
  const auto files = list_documents(a.inputs, a.extensions, "prepare lambada");
  std::string jsonl;
  int64_t items = 0;
  for (const auto& file : files) {
    for (const auto& p : lambada_passages(read_text_file(file), a.options)) {
      if (a.limit > 0 && items == a.limit) break;
      jsonl += nlohmann::json{{"text", p.text}, {"target", p.target}, {"source", file.string()}}.dump(
                   -1, ' ', false, nlohmann::json::error_handler_t::replace) +
               "\n";
      ++items;
    }
  }
  if (items == 0)
    throw UsageError(fmt::format("prepare lambada: no passage of {}-{} words in {} file(s) ends in a word {}",
                                 a.options.min_words, a.options.max_words, files.size(),
                                 a.any_final_word ? "of 3+ letters" : "its context used (try --any-final-word)"));
  write_file_atomic(a.out, jsonl);
  std::cout << fmt::format("{} passages from {} file(s) -> {}\n", items, files.size(), a.out);
}

}  // namespace

void register_prepare_lambada(CLI::App& prepare) {
  auto* cmd = prepare.add_subcommand("lambada", "A LAMBADA-style last-word task (JSONL) from narrative text");
  cmd->footer(
      "Examples:\n"
      "  ember prepare lambada books/ --out lambada_books.jsonl --limit 2000\n"
      "  ember eval runs/tiny --task lambada lambada_books.jsonl\n"
      "Passages of whole sentences whose final word already occurs earlier in the passage (LAMBADA's\n"
      "human filter replaced by that proxy); each line is {\"text\", \"target\", \"source\"}.");
  auto a = std::make_shared<LambadaArgs>();
  cmd->add_option("inputs", a->inputs, "Text files or directories")->required();
  cmd->add_option("--out", a->out, "JSONL file to write")->required();
  cmd->add_option("--ext", a->extensions, "File extensions taken from directories (default .txt .rst .md)");
  cmd->add_option("--min-words", a->options.min_words, "Shortest passage in words (default 50)");
  cmd->add_option("--max-words", a->options.max_words, "Longest passage in words (default 150)");
  cmd->add_flag("--any-final-word", a->any_final_word, "Keep passages whose final word is new to the context");
  cmd->add_option("--limit", a->limit, "Stop after N passages (0: all)")->check(kNonNegative);
  cmd->callback([a] { run_prepare_lambada(*a); });
}

}  // namespace ember::cli
