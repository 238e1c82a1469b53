#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>

#include "cli/commands.h"
#include "ember/data/text_encoder.h"
#include "ember/eval/generate.h"
#include "ember/run/model_loader.h"
#include "ember/run/run_data.h"
#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember::cli {
namespace {

struct GenerateArgs {
  std::string path, prompt, prompt_file, device = "auto";
  SamplingOptions sampling;
  bool json = false, keep_going = false;
};

void run_generate(const GenerateArgs& a) {
  if (a.prompt.empty() == a.prompt_file.empty())
    throw UsageError("generate: give exactly one of --prompt TEXT or --prompt-file FILE");
  auto loaded = load_trained_model(a.path);
  loaded.model->to(resolve_device(a.device, "--device"));
  const TextEncoder encoder = RunData(loaded.run_dir, loaded.config.data).encoder();
  const std::string prompt = a.prompt.empty() ? read_text_file(a.prompt_file) : a.prompt;
  SamplingOptions o = a.sampling;
  o.vocab_limit = encoder.vocab_size();  // a model wider than its tokenizer never samples an id it cannot decode
  uint32_t separator = 0;
  if (!a.keep_going && encoder.document_separator(separator)) o.stop = separator;  // the end of a document
  std::string stopped;
  const auto ids = generate(
      *loaded.model, encoder.encode(prompt), o,
      [&](uint32_t id) {
        if (!a.json) std::cout << encoder.decode({id}) << std::flush;  // streams as it goes
      },
      &stopped);
  if (a.json) {
    std::cout << nlohmann::json{{"checkpoint", loaded.checkpoint_dir.string()},
                                {"prompt", prompt},
                                {"continuation", encoder.decode(ids)},
                                {"ids", ids},
                                {"tokens", ids.size()},
                                {"stopped", stopped}}
                     .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)  // invalid UTF-8: U+FFFD
              << "\n";
    return;
  }
  std::cout << "\n";
  if (stopped == "max_seq_len")
    std::cerr << fmt::format("generate: stopped after {} tokens: prompt and continuation fill model.max_seq_len = {}\n",
                             ids.size(), loaded.model->config().max_seq_len);
}

}  // namespace

void register_generate(CLI::App& app) {
  auto* cmd = app.add_subcommand("generate", "Sample a continuation of a prompt from a trained model");
  cmd->footer(
      "The prompt is read with the run's tokenizer (byte-level runs: bytes). --temperature 0 is greedy.\n"
      "Examples:\n"
      "  ember generate runs/tiny --prompt 'def main(' --tokens 80\n"
      "  ember generate runs/tiny --prompt-file start.txt --temperature 0 --json\n"
      "  ember generate runs/tiny --prompt 'The ' --top-k 40 --top-p 0.9 --seed 7");
  auto a = std::make_shared<GenerateArgs>();
  cmd->add_option("path", a->path, "Run directory or checkpoint directory")->required();
  cmd->add_option("--prompt", a->prompt, "Text to continue")
      ->check(CLI::Validator([](std::string& s) { return s.empty() ? std::string("the prompt is empty") : ""; }, "TEXT",
                             "non-empty"));
  cmd->add_option("--prompt-file", a->prompt_file, "A file holding the text to continue");
  cmd->add_option("--tokens", a->sampling.max_tokens, "New tokens at most (default 64)")->check(kNonNegative);
  cmd->add_option("--temperature", a->sampling.temperature, "Softmax temperature; 0 = greedy (default 0.8)")
      ->check(kNonNegative);
  cmd->add_option("--top-k", a->sampling.top_k, "Sample among the k most likely tokens (0: all)")->check(kNonNegative);
  cmd->add_option("--top-p", a->sampling.top_p, "Nucleus: the smallest set of tokens reaching this mass (1: all)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--seed", a->sampling.seed, "Random seed (default 0)");
  cmd->add_option("--device", a->device, "auto (CUDA when available), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  cmd->add_flag("--keep-going", a->keep_going, "Do not stop at the end-of-document token");
  cmd->add_flag("--json", a->json, "Print one JSON object instead of streaming text");
  cmd->callback([a] { run_generate(*a); });
}

}  // namespace ember::cli
