// `ember import hf`'s reading of a Hugging Face config.json: parsed, mapped onto an ember model
// (anything ember would load wrongly is refused by key) and put through ember's own checks, as
// import_hf does before it builds the model.
#include "ember/interop/hf_files.h"
#include "ember/interop/hf_llama.h"
#include "ember/run/run_config.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ember;
  const auto file = fuzz::input_file("config.json", fuzz::as_text(data, size));
  fuzz::expect_clean_errors([&] {
    Config cfg;
    cfg.model = model_config_from_hf(read_hf_config(file.parent_path()), file.string());
    cfg.train.seq_len = std::min(cfg.train.seq_len, cfg.model.max_seq_len);
    const Config checked = parse_config_text(to_yaml(cfg), file.string());
    fuzz::require(model_hash(checked.model) == model_hash(cfg.model), "the imported model survives ember's checks");
  });
  return 0;
}
