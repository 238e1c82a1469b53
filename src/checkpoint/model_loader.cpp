#include "ember/eval/model_loader.h"

#include "ember/train/checkpoint.h"
#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember {

LoadedModel load_trained_model(const fs::path& path) {
  CheckpointData ckpt = load_checkpoint_or_run(path);
  const fs::path run_dir = ckpt.dir.parent_path().parent_path();  // run/checkpoints/step_N
  const fs::path config_file = run_dir / "config.yaml";
  if (!fs::exists(config_file))
    throw CheckpointError("no config.yaml in run directory '" + run_dir.string() + "' of checkpoint '" +
                          ckpt.dir.string() + "'");
  LoadedModel out;
  out.config = parse_config_text(read_text_file(config_file), config_file.string());
  out.model = std::make_shared<LanguageModel>(out.config.model);
  torch::NoGradGuard no_grad;
  for (auto& item : out.model->named_parameters()) {
    const std::string& name = item.key();
    at::Tensor& p = item.value();
    auto it = ckpt.model.find(name);
    if (it == ckpt.model.end() || it->second.sizes() != p.sizes())
      throw CheckpointError("checkpoint '" + ckpt.dir.string() + "': parameter '" + name +
                            "' is missing or has the wrong shape for the run's config");
    p.copy_(it->second);
  }
  out.checkpoint_dir = ckpt.dir;
  out.step = ckpt.state.value("step", int64_t{0});
  out.model->eval();
  return out;
}

}  // namespace ember
