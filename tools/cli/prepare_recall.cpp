// `ember prepare recall`: the synthetic associative-recall task (data/recall_task.h), training shards
// and a held-out task file for `ember eval --task recall`.
#include <iostream>

#include "cli/commands.h"
#include "ember/data/recall_task.h"

namespace ember::cli {

void register_prepare_recall(CLI::App& prepare) {
  auto* cmd = prepare.add_subcommand("recall", "A synthetic associative-recall task: shards and a task file");
  auto o = std::make_shared<RecallPrepareOptions>();
  cmd->add_option("--out", o->out_dir, "Output directory (shards, manifest.json, recall_task.jsonl)")->required();
  cmd->add_option("--keys", o->spec.keys, "Key tokens (ids 0..keys-1)")->capture_default_str();
  cmd->add_option("--values", o->spec.values, "Value tokens (ids keys..keys+values-1)")->capture_default_str();
  cmd->add_option("--pairs", o->spec.pairs, "Key-value pairs per sequence (distinct keys)")->capture_default_str();
  cmd->add_option("--queries", o->spec.queries, "Queried pairs per sequence, after the separator")->capture_default_str();
  cmd->add_option("--sequences", o->train_sequences, "Training sequences")->capture_default_str();
  cmd->add_option("--val-sequences", o->val_sequences, "Validation sequences (the val shards)")->capture_default_str();
  cmd->add_option("--task-items", o->task_items, "Held-out sequences in recall_task.jsonl")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed of the draw")->capture_default_str();
  cmd->footer(
      "A sequence is k1 v1 ... kP vP SEP q1 a1 ... qQ aQ: each query is an earlier key and its answer that key's\n"
      "value, so only a model that mixes across positions can predict it (chance: 1 / values).\n"
      "Train with model.vocab_size = keys + values + 1 and train.seq_len = 2 pairs + 1 + 2 queries (one\n"
      "sequence per window); score with `ember eval RUN --task recall OUT/recall_task.jsonl`.\n"
      "Example:\n"
      "  ember prepare recall --out data/recall\n"
      "  ember train -c configs/recall.yaml --set data.train=[data/recall/train_*.bin] --set data.val=[data/recall/val_*.bin]\n"
      "  ember eval runs/recall --task recall data/recall/recall_task.jsonl");
  cmd->callback([o] {
    const auto s = prepare_recall(*o);
    std::cout << fmt::format(
        "{} train + {} val sequences of {} tokens (vocab {}) -> {} train tokens, {} val tokens; task: {}\n",
        o->train_sequences, o->val_sequences, o->spec.length(), o->spec.vocab(), s.train_tokens, s.val_tokens,
        (o->out_dir / "recall_task.jsonl").string());
  });
}

}  // namespace ember::cli
