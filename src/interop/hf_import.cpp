#include "ember/interop/hf_import.h"

#include <algorithm>

#include "ember/run/checkpoint.h"
#include "ember/run/parameters.h"
#include "ember/run/run_config.h"
#include "ember/run/train_state.h"
#include "ember/interop/hf_files.h"
#include "ember/interop/hf_llama.h"
#include "ember/util/files.h"

namespace ember {

HfImportResult import_hf(const fs::path& hf_dir, const fs::path& run_dir) {
  const std::string where = (hf_dir / "config.json").string();
  Config cfg;
  cfg.model = model_config_from_hf(read_hf_config(hf_dir), where);
  const fs::path normal = run_dir.lexically_normal();
  cfg.log.name = (normal.filename().empty() ? normal.parent_path() : normal).filename().string();
  cfg.train.seq_len = std::min(cfg.train.seq_len, cfg.model.max_seq_len);
  cfg = parse_config_text(to_yaml(cfg), where);  // ember's own checks of the resulting model
  auto model = std::make_shared<LanguageModel>(cfg.model);
  load_hf_tensors(*model, read_hf_weights(hf_dir), hf_dir.string());

  StagedDirectory out(run_dir, "import hf");
  write_file_atomic(out.path() / "config.yaml", to_yaml(cfg));
  TrainState state;
  state.config_hash = config_hash(cfg);
  state.model_hash = model_hash(cfg.model);
  state.origin = "ember import hf " + fs::absolute(hf_dir).lexically_normal().string();
  state.weights_only = true;
  const fs::path ckpt = Checkpointer(out.path(), 1).save({{"train", state.save_state()}, {"model", {module_tensors(*model), nullptr}}}, 0);
  out.publish();
  return {model->num_parameters(), cfg.model.embedding.kind, cfg.model.mixer.kind, run_dir / "checkpoints" / ckpt.filename()};
}

}  // namespace ember
