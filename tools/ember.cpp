// ember: one binary, git-style subcommands over the library. User mistakes end as one line on
// stderr and a non-zero exit.
#include "ember/util/log.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include <c10/util/Exception.h>
#include "cli/commands.h"
#include "ember/util/error.h"
#include "ember/util/suggest.h"

namespace {

// The first word of argv that should name a command of `app` (or of the command before it, when
// that one needs a subcommand) and does not: "unknown command 'trian'; did you mean 'train'?", or
// "" when every command is known. CLI11 alone takes such a word for an extra argument, or prints
// the top-level help for it and exits 0.
std::string unknown_command(CLI::App& app, int argc, char** argv) {
  CLI::App* at = &app;
  std::string path;
  for (int i = 1; i < argc && argv[i][0] != '-'; ++i) {
    std::vector<std::string> names;
    for (auto* sub : at->get_subcommands([](CLI::App*) { return true; })) names.push_back(sub->get_name());
    if (names.empty()) return "";
    const std::string word = argv[i];
    if (auto* sub = std::find(names.begin(), names.end(), word) != names.end() ? at->get_subcommand(word) : nullptr) {
      at = sub, path += word + " ";
      continue;
    }
    if (at->get_require_subcommand_min() == 0) return "";
    const auto near = ember::closest_match(word, names);
    return "unknown command '" + path + word + "'" + (near.empty() ? "" : "; did you mean '" + path + near + "'?");
  }
  return "";
}

int run(int argc, char** argv) {
  CLI::App app{
      "ember: a research training framework for decoder-only language models\n"
      "(LEV embeddings, tapered MLP stacks, representational capacity analysis)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "ember 0.1.0");
  app.footer("Run 'ember <command> --help' for a command's options and examples.");
  ember::cli::register_train(app);
  ember::cli::register_eval(app);
  ember::cli::register_generate(app);
  ember::cli::register_prepare(app);
  ember::cli::register_inspect(app);
  ember::cli::register_kernels(app);
  ember::cli::register_config(app);
  ember::cli::register_analyze(app);
  ember::cli::register_tokenizer(app);
  ember::cli::register_capacity(app);
  ember::cli::register_launch(app);
  ember::cli::register_sweep(app);
  ember::cli::register_report(app);
  ember::cli::register_ladder(app);
  ember::cli::register_export(app);
  ember::cli::register_import(app);
  if (const auto unknown = unknown_command(app, argc, argv); !unknown.empty()) {
    std::cerr << "ember: error: " << unknown << " (see ember --help)\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "ember: error: " << e.what() << " (see --help)\n";
    return e.get_exit_code();
  } catch (const ember::Error& e) {
    std::cerr << "ember: error: " << e.what() << "\n";
    return 1;
  } catch (const c10::Error& e) {
    std::cerr << "ember: error: " << e.what_without_backtrace() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "ember: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

// The command has ended and every object it made (trainer, process group, run lock, log sinks) is
// destroyed when run() returns. What is left are the libraries' static destructors (LibTorch
// deregisters every operator: ~0.1 s of each process), which write nothing of ours: the streams
// are flushed and the process ends without them. EMBER_FULL_EXIT=1 runs them (a debugger, a leak
// checker).
int main(int argc, char** argv) {
  const int code = run(argc, argv);
  if (const char* full = std::getenv("EMBER_FULL_EXIT"); full && std::string(full) == "1") return code;
  ember::log::flush();
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::_exit(code);
}
