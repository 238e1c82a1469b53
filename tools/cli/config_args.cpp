#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "ember/run/run_config.h"
#include "ember/config/json_writer.h"
#include "ember/model/embedding_registry.h"
#include "ember/model/feed_forward_registry.h"
#include "ember/model/mixer_registry.h"
#include "ember/util/error.h"

namespace ember::cli {
namespace {

// One seam's registry rows: kind, description and default options.
template <class Row>
nlohmann::json seam_json(const std::string& key, const std::vector<Row>& table) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : table) {
    nlohmann::json options = nlohmann::json::object();
    if (row.default_options) options = section_json(*row.default_options());
    rows.push_back({{"kind", row.name}, {"description", row.description}, {"options", options}});
  }
  return {{"key", key}, {"kinds", rows}};
}

}  // namespace

nlohmann::json kinds_json() {
  return nlohmann::json::array({seam_json("model.embedding.kind", embedding_kinds()),
                                seam_json("model.mixer.kind", mixer_kinds()),
                                seam_json("model.mlp.kind", feed_forward_kinds())});
}

std::string kinds_help() {
  std::string out;
  for (const auto& seam : kinds_json()) {
    const std::string key = seam["key"];
    const std::string section = key.substr(0, key.rfind('.'));
    out += key + ":\n";
    for (const auto& k : seam["kinds"]) {
      out += fmt::format("  {:<16} {}\n", k["kind"].get<std::string>(), k["description"].get<std::string>());
      if (!k["options"].empty())
        out +=
            fmt::format("  {:<16} options {}.{}: {}\n", "", section, k["kind"].get<std::string>(), k["options"].dump());
    }
  }
  return out;
}

void add_config_options(CLI::App& cmd, ConfigArgs& args, bool required) {
  auto* c = cmd.add_option("-c,--config", args.files, "YAML config file; several are merged in order (later wins)");
  c->allow_extra_args(false);  // one file per -c; repeat -c for more
  if (required) c->required();
  cmd.add_option("--set", args.overrides, "Override one key, e.g. --set train.steps=500 (repeatable)")
      ->allow_extra_args(false);
}

void register_config(CLI::App& app) {
  auto* cmd = app.add_subcommand("config", "Print the fully resolved, validated config (or the kinds of each seam)");
  cmd->footer(
      "Examples:\n"
      "  ember config -c configs/tiny.yaml --set model.d_model=256\n"
      "  ember config --kinds          # embedding, mixer and feed-forward kinds with their default options\n\n" +
      kinds_help());
  auto args = std::make_shared<ConfigArgs>();
  auto kinds = std::make_shared<bool>(false), json = std::make_shared<bool>(false);
  add_config_options(*cmd, *args, false);
  cmd->add_flag("--kinds", *kinds, "List the kinds of model.embedding.kind, model.mixer.kind and model.mlp.kind");
  cmd->add_flag("--json", *json, "Print JSON (the resolved config, or with --kinds the kinds)");
  cmd->callback([args, kinds, json] {
    if (*kinds) {
      std::cout << (*json ? kinds_json().dump(2) + "\n" : kinds_help());
      return;
    }
    if (args->files.empty()) throw UsageError("config: give -c CONFIG (or --kinds)");
    auto cfg = load_config(args->files, args->overrides);
    std::cout << (*json ? section_json(cfg).dump(2) + "\n" : to_yaml(cfg));
  });
}

}  // namespace ember::cli
