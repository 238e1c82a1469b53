// `ember prepare text` and `ember prepare corpus`: BPE-tokenised shards beside `prepare bytes`.
#include <iostream>

#include "cli/commands.h"
#include "ember/data/corpus_presets.h"
#include "ember/data/prepare_merge.h"
#include "ember/data/prepare_text.h"

namespace ember::cli {
namespace {

void add_common(CLI::App& cmd, TextPrepareOptions& opt) {
  cmd.add_option("--tokenizer", opt.tokenizer,
                 "Tokenizer preset (r50k_base, cl100k_base, o200k_base, llama3, ...) or rank file")
      ->required();
  cmd.add_option("--out", opt.out_dir, "Output directory for shards, manifest.json, train_token_counts.json")
      ->required();
  cmd.add_option("--shard-tokens", opt.shard_tokens, "Tokens per shard")->check(kPositive);
  cmd.add_option("--threads", opt.threads, "Encoding threads")->check(CLI::Range(1, 256));
  cmd.add_flag("!--no-progress", opt.progress, "Hide the progress bar");
}

void print_summary(const PrepareSummary& s, const TextPrepareOptions& opt) {
  std::cout << fmt::format("{} files ({} documents) -> {} train tokens, {} val tokens in {} shards under {}\n",
                           s.files, s.documents, s.train_tokens, s.val_tokens, s.shards.size(), opt.out_dir.string());
}

}  // namespace

void register_prepare_text(CLI::App& prepare) {
  auto opt = std::make_shared<TextPrepareOptions>();
  auto* text = prepare.add_subcommand("text", "BPE tokens from text, JSONL and Parquet files and directories");
  text->add_option("inputs", opt->inputs,
                   "Text files, .jsonl (one document per line), .parquet (one per row), each text or .jsonl "
                   "also as .gz or .zst, or directories of them")
      ->required();
  add_common(*text, *opt);
  text->add_option("--val-fraction", opt->val_fraction, "Share of documents for validation (0: a train-only corpus)")
      ->check(CLI::Range(0.0, 1.0));
  text->add_option("--ext", opt->extensions, "File extensions taken from directories");
  text->add_option("--jsonl-field", opt->jsonl_field, "Field of each JSONL object that holds the text");
  text->add_option("--text-column", opt->text_column, "Column of Parquet files that holds the text");
  auto part = std::make_shared<std::string>();
  text->add_option("--part", *part,
                   "Prepare only part I of N (I/N) of the sorted input list into --out, for N jobs; join the "
                   "parts with `ember prepare merge`");
  text->footer(
      "Examples:\n  ember prepare text corpus/ --tokenizer cl100k_base --out data/corpus\n"
      "  ember prepare text docs.jsonl --tokenizer tok/my8k.tiktoken --out data/docs\n"
      "  ember prepare text fineweb/sample/10BT/ --tokenizer llama3 --out data/fw/part3 --part 3/8\n"
      "  ember prepare merge data/fw/part* --out data/fw/all   (docs/data.md: a Slurm array)");
  text->callback([opt, part] {
    if (!part->empty()) opt->part = parse_prepare_part(*part);
    print_summary(prepare_text(*opt), *opt);
  });

  auto mopt = std::make_shared<MergeOptions>();
  auto* merge = prepare.add_subcommand("merge", "Join the parts of `prepare text --part I/N` into one data directory");
  merge->add_option("parts", mopt->parts, "The N part directories, in any order")->required();
  merge->add_option("--out", mopt->out_dir, "Output directory: shards, manifest.json, train_token_counts.json")
      ->required();
  merge->add_flag("!--no-progress", mopt->progress, "Hide progress");
  merge->footer(
      "The merged directory is what one `prepare text` of the whole list writes (the same shards);\n"
      "the parts may be removed afterwards.\n"
      "Example:\n  ember prepare merge data/fw/part1 data/fw/part2 --out data/fw/all");
  merge->callback([mopt] {
    const auto s = merge_prepared_parts(*mopt);
    std::cout << fmt::format("{} parts, {} files -> {} train tokens, {} val tokens in {} shards under {}\n",
                             mopt->parts.size(), s.files, s.train_tokens, s.val_tokens, s.shards.size(),
                             mopt->out_dir.string());
  });

  auto copt = std::make_shared<TextPrepareOptions>();
  auto name = std::make_shared<std::string>();
  auto* corpus = prepare.add_subcommand("corpus",
                                        "A named corpus from Debian packages: default, pydoc, linuxdoc, "
                                        "kjv, handbook (the last two: evaluation only)");
  corpus->add_option("name", *name, "Corpus name")->required();
  add_common(*corpus, *copt);
  corpus->footer(
      "Examples:\n  ember tokenizer train /usr/share/doc/python3.11/html/_sources --vocab-size 8192 --out "
      "tok/8k.tiktoken\n"
      "  ember prepare corpus default --tokenizer tok/8k.tiktoken --out data/default\n"
      "  ember prepare corpus kjv --tokenizer tok/8k.tiktoken --out data/kjv");
  corpus->callback([copt, name] {
    const auto src = materialize_corpus(*name, copt->out_dir / "source");
    copt->inputs = src.inputs;
    copt->extensions = src.extensions;
    copt->val_fraction = src.val_fraction;
    copt->corpus_name = *name;
    print_summary(prepare_text(*copt), *copt);
  });
}

}  // namespace ember::cli
