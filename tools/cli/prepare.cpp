#include <iostream>

#include "cli/commands.h"
#include "ember/data/prepare_bytes.h"

namespace ember::cli {

void register_prepare(CLI::App& app) {
  auto* cmd = app.add_subcommand("prepare", "Turn text into token shards (and task files)");
  cmd->require_subcommand(1);
  auto* bytes = cmd->add_subcommand("bytes", "Byte-level tokens (V = 256, documents separated by 0)");
  bytes->footer(
      "Example:\n"
      "  ember prepare bytes /usr/share/doc/python3.11/html/_sources --out data/pydoc");
  auto opt = std::make_shared<BytePrepareOptions>();
  bytes->add_option("inputs", opt->inputs, "Text files or directories")->required();
  bytes->add_option("--out", opt->out_dir, "Output directory for shards and manifest.json")->required();
  bytes->add_option("--val-fraction", opt->val_fraction, "Share of documents for validation (0: a train-only corpus)")
      ->check(CLI::Range(0.0, 1.0));
  bytes->add_option("--ext", opt->extensions, "File extensions taken from directories");
  bytes->add_option("--shard-tokens", opt->shard_tokens, "Tokens per shard")->check(kPositive);
  register_prepare_text(*cmd);
  register_prepare_lambada(*cmd);
  register_prepare_recall(*cmd);
  bytes->callback([opt] {
    auto s = prepare_bytes(*opt);
    std::cout << fmt::format("{} documents -> {} train tokens, {} val tokens in {} shards under {}\n", s.documents,
                             s.train_tokens, s.val_tokens, s.shards.size(), opt->out_dir.string());
  });
}

}  // namespace ember::cli
