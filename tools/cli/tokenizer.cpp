// `ember tokenizer encode|decode|train|hf`: thin wrappers over the BPE engine, its trainer and the
// Hugging Face tokenizer.json writer.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "cli/commands.h"
#include "ember/data/bpe_trainer.h"
#include "ember/data/corpus_presets.h"
#include "ember/data/hf_tokenizer.h"
#include "ember/data/tokenizer.h"
#include "ember/data/tokenizer_presets.h"
#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember::cli {
namespace {

struct TokenizerArgs {
  std::string preset, file;
  bool json = false, specials = false, stats = false;
};

void add_tokenizer_choice(CLI::App& cmd, TokenizerArgs& a) {
  auto* p =
      cmd.add_option("--preset", a.preset, "Named tokenizer (r50k_base, p50k_base, cl100k_base, o200k_base, llama3)");
  auto* f = cmd.add_option("--file", a.file, "A tiktoken rank file (e.g. one written by `ember tokenizer train`)");
  p->excludes(f);
}

Tokenizer open_tokenizer(const TokenizerArgs& a) {
  if (a.preset.empty() == a.file.empty())
    throw UsageError("tokenizer: give exactly one of --preset NAME or --file RANKS");
  return Tokenizer(a.preset.empty() ? resolve_tokenizer(a.file) : tokenizer_preset(a.preset));
}

std::string read_stdin() {
  std::ios::sync_with_stdio(false);
  return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
}

// Ids separated by whitespace and/or commas, optionally inside one JSON array.
std::vector<uint32_t> parse_ids(const std::string& text) {
  std::vector<uint32_t> ids;
  size_t i = 0, n = text.size();
  while (i < n) {
    const char c = text[i];
    if (c == '[' || c == ']' || c == ',' || std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < n && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (j == i || j - i > 10)
      throw UsageError("tokenizer decode: expected token ids (integers) on stdin, found '" +
                       text.substr(i, std::min<size_t>(20, text.find_first_of(" \t\r\n,]", i) - i)) + "' at byte " +
                       std::to_string(i));
    const unsigned long long v = std::stoull(text.substr(i, j - i));
    if (v > 0xFFFFFFFFull) throw UsageError("tokenizer decode: token id " + text.substr(i, j - i) + " is too large");
    ids.push_back(static_cast<uint32_t>(v));
    i = j;
  }
  return ids;
}

void register_encode_decode(CLI::App& tok) {
  auto enc_args = std::make_shared<TokenizerArgs>();
  auto* enc = tok.add_subcommand("encode", "UTF-8 text on stdin -> token ids on stdout");
  add_tokenizer_choice(*enc, *enc_args);
  enc->add_flag("--json", enc_args->json, "Print a JSON array instead of space-separated ids");
  enc->add_flag("--specials", enc_args->specials, "Encode special-token strings (e.g. <|endoftext|>) as their ids");
  enc->add_flag("--stats", enc_args->stats, "Print bytes, tokens and encode throughput (one thread) on stderr");
  enc->footer(
      "Examples:\n  echo 'Hello world' | ember tokenizer encode --preset cl100k_base\n"
      "  ember tokenizer encode --file tok.tiktoken --json < doc.txt");
  enc->callback([enc_args] {
    const Tokenizer t = open_tokenizer(*enc_args);
    const std::string text = read_stdin();
    const auto t0 = std::chrono::steady_clock::now();
    const auto ids = enc_args->specials ? t.encode_with_specials(text) : t.encode(text);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (enc_args->stats)
      std::cerr << fmt::format("{} bytes -> {} tokens in {:.3f} s: {:.2f} MB/s\n", text.size(), ids.size(), s,
                               text.size() / 1e6 / std::max(s, 1e-9));
    std::string out = enc_args->json ? "[" : "";
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i) out += enc_args->json ? ", " : " ";
      out += std::to_string(ids[i]);
    }
    out += enc_args->json ? "]\n" : "\n";
    std::cout << out;
  });
  auto dec_args = std::make_shared<TokenizerArgs>();
  auto* dec = tok.add_subcommand("decode", "Token ids on stdin (space/comma-separated or a JSON array) -> text");
  add_tokenizer_choice(*dec, *dec_args);
  dec->footer("Example:\n  echo '9906 1917' | ember tokenizer decode --preset cl100k_base");
  dec->callback([dec_args] {
    const Tokenizer t = open_tokenizer(*dec_args);
    std::cout << t.decode(parse_ids(read_stdin())) << std::flush;
  });
}

// The rank file's place, checked before training (minutes on a large corpus): the nearest folder
// of --out that exists must be a directory a file can be created in.
void check_out_place(const std::filesystem::path& out) {
  namespace fs = std::filesystem;
  auto dir = fs::absolute(out).parent_path();
  while (!fs::exists(dir)) dir = dir.parent_path();
  if (!fs::is_directory(dir))
    throw UsageError(fmt::format("--out '{}': '{}' is not a directory", out.string(), dir.string()));
  const fs::path probe = dir / fmt::format(".ember_write_probe_{}", ::getpid());
  const bool writable = static_cast<bool>(std::ofstream(probe));
  std::error_code ignored;
  fs::remove(probe, ignored);
  if (!writable) throw UsageError(fmt::format("--out '{}': cannot create files in '{}'", out.string(), dir.string()));
}

void register_train_cmd(CLI::App& tok) {
  auto opt = std::make_shared<BpeTrainOptions>();
  auto out = std::make_shared<std::string>();
  auto corpus = std::make_shared<std::string>();
  auto* train = tok.add_subcommand("train", "Train a byte-level BPE (GPT-2 regex) and write tiktoken ranks");
  auto* inputs = train->add_option("inputs", opt->inputs, "Text files or directories");
  train->add_option("--corpus", *corpus, "A named corpus instead of inputs (default, pydoc, linuxdoc)")
      ->excludes(inputs);
  train->add_option("--out", *out, "Rank file to write (a <out>.json sidecar holds regex and specials)")->required();
  train->add_option("--vocab-size", opt->vocab_size, "Vocabulary size, including <|endoftext|>")
      ->check(CLI::Range(257, 1 << 24));
  train->add_option("--ext", opt->extensions, "File extensions taken from directories");
  train->footer(
      "Examples:\n  ember tokenizer train /usr/share/doc/python3.11/html/_sources --vocab-size 8192 --out "
      "tok/pydoc8k.tiktoken\n"
      "  ember tokenizer train --corpus default --vocab-size 8192 --out tok/default8k.tiktoken");
  train->callback([opt, out, corpus] {
    const auto t0 = std::chrono::steady_clock::now();
    check_out_place(*out);
    if (!corpus->empty()) {
      const auto src = materialize_corpus(*corpus, std::filesystem::path(*out).parent_path() / "source");
      opt->inputs = src.inputs;
      opt->extensions = src.extensions;
    }
    if (opt->inputs.empty()) throw UsageError("tokenizer train: give text files or directories, or --corpus NAME");
    const auto r = train_bpe(*opt);
    save_trained_tokenizer(r, *out);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << fmt::format("trained {} ranks + <|endoftext|> on {:.1f} MB in {:.1f} s -> {}\n", r.tokens.size(),
                             r.corpus_bytes / 1e6, s, *out);
  });
}

void register_hf_cmd(CLI::App& tok) {
  auto args = std::make_shared<TokenizerArgs>();
  auto bytes = std::make_shared<bool>(false);
  auto out = std::make_shared<std::string>();
  auto max_length = std::make_shared<int64_t>(2048);
  auto* hf =
      tok.add_subcommand("hf", "Write a tokenizer as Hugging Face files (tokenizer.json, tokenizer_config.json)");
  add_tokenizer_choice(*hf, *args);
  hf->add_flag("--bytes", *bytes, "Byte-level ids (id = byte), as `ember prepare bytes` data uses");
  hf->add_option("--out", *out, "Directory to write into (created if absent)")->required();
  hf->add_option("--max-length", *max_length, "model_max_length in tokenizer_config.json")->check(kPositive);
  hf->footer(
      "Examples:\n  ember tokenizer hf --preset cl100k_base --out hf/cl100k\n"
      "  ember tokenizer hf --file tok/pydoc8k.tiktoken --out exports/tiny\n"
      "The files encode text to the same ids as ember (and tiktoken). `ember export hf` writes them too.");
  hf->callback([args, bytes, out, max_length] {
    if (*bytes && !(args->preset.empty() && args->file.empty()))
      throw UsageError("tokenizer hf: --bytes excludes --preset and --file");
    const TextEncoder encoder =
        *bytes ? TextEncoder::bytes() : TextEncoder(std::make_shared<const Tokenizer>(open_tokenizer(*args)));
    std::filesystem::create_directories(*out);
    write_file_atomic(std::filesystem::path(*out) / "tokenizer.json", hf_tokenizer_json(encoder).dump() + "\n");
    write_file_atomic(std::filesystem::path(*out) / "tokenizer_config.json",
                      hf_tokenizer_config(encoder, *max_length).dump(2) + "\n");
    std::cout << fmt::format("wrote {}/tokenizer.json ({}, {} ids)\n", *out, encoder.name(), encoder.vocab_size());
  });
}

}  // namespace

void register_tokenizer(CLI::App& app) {
  auto* tok = app.add_subcommand("tokenizer", "Encode, decode, train and export byte-level BPE tokenizers");
  tok->require_subcommand(1);
  register_encode_decode(*tok);
  register_train_cmd(*tok);
  register_hf_cmd(*tok);
}

}  // namespace ember::cli
