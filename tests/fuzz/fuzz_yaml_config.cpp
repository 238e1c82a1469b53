// The run configuration as `ember train -c FILE --set k=v` reads it. The input is the YAML file,
// then, after a line `#--set`, one override per line. A configuration it accepts must survive its
// own fully resolved form: to_yaml() parses back to the same configuration (same hash).
#include "ember/run/run_config.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ember;
  const auto [yaml, sets] = fuzz::split_at_marker(fuzz::as_text(data, size), "#--set");
  const auto file = fuzz::input_file("config.yaml", yaml);
  const std::vector<std::string> overrides = fuzz::lines_of(sets);
  fuzz::expect_clean_errors([&] {
    const Config cfg = load_config({file.string()}, overrides);
    const std::string resolved = to_yaml(cfg);
    const Config again = parse_config_text(resolved, "to_yaml()");
    fuzz::require(config_hash(again) == config_hash(cfg), "to_yaml() parses back to the same configuration");
    fuzz::require(model_hash(again.model) == model_hash(cfg.model), "the model hash survives to_yaml()");
  });
  return 0;
}
