"""Reading an ember run directory from Python: its resolved config.yaml and the model tensors of its
newest checkpoint (checkpoints/latest names it; safetensors files, as ember writes them)."""
from pathlib import Path

import yaml
from safetensors.torch import load_file


def checkpoint_dir(run):
    """The checkpoint a run's `latest` names, else its highest step_N; `run` may also be a checkpoint."""
    run = Path(run)
    if (run / "model.safetensors").is_file():
        return run
    checkpoints = run / "checkpoints"
    latest = checkpoints / "latest"
    if latest.is_file():
        named = checkpoints / latest.read_text().strip()
        if (named / "model.safetensors").is_file():
            return named
    steps = sorted(checkpoints.glob("step_*"), key=lambda p: int(p.name.split("_")[-1]) if p.name[5:].isdigit() else -1)
    steps = [s for s in steps if (s / "model.safetensors").is_file()]
    if not steps:
        raise FileNotFoundError(f"ember: {run} holds no checkpoint (no model.safetensors in checkpoints/step_*)")
    return steps[-1]


def run_config(run):
    """The run's resolved config (config.yaml beside checkpoints/), as a dict."""
    run = Path(run)
    for place in (run, run.parent.parent):  # a run directory, or one of its checkpoints
        if (place / "config.yaml").is_file():
            return yaml.safe_load((place / "config.yaml").read_text())
    raise FileNotFoundError(f"ember: no config.yaml in {run} or the run it belongs to")


def model_tensors(run, prefix=""):
    """The newest checkpoint's model tensors whose names start with `prefix` (the prefix removed)."""
    tensors = load_file(str(checkpoint_dir(run) / "model.safetensors"))
    return {name[len(prefix):]: t for name, t in tensors.items() if name.startswith(prefix)}
