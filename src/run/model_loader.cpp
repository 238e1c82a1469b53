#include "ember/run/model_loader.h"

#include "ember/run/checkpoint.h"
#include "ember/run/parameters.h"
#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember {

LoadedModel load_trained_model(const fs::path& path) {
  CheckpointData ckpt = load_checkpoint_or_run(path, {"model"});  // the optimizer state is not needed
  const fs::path run_dir = run_dir_of_checkpoint(ckpt.dir);
  const fs::path config_file = run_dir / "config.yaml";
  if (!fs::exists(config_file))
    throw CheckpointError("no config.yaml in run directory '" + run_dir.string() + "' of checkpoint '" +
                          ckpt.dir.string() + "'");
  LoadedModel out;
  out.config = parse_config_text(read_text_file(config_file), config_file.string());
  out.model = std::make_shared<LanguageModel>(out.config.model);
  load_parameters(*out.model, ckpt.component("model").tensors, ckpt.where());
  out.checkpoint_dir = ckpt.dir;
  out.run_dir = run_dir;
  out.step = ckpt.step;
  out.model->eval();
  return out;
}

}  // namespace ember
