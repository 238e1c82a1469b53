# Gradient accumulation: k micro-steps of B sequences equal one step of k x B sequences (the same
# windows in the same order), up to float summation order. Tolerance: every logged loss within
# 1e-5 relative, and final parameters within 1e-4 of the largest parameter, after 20 AdamW steps.
source "$(dirname "$0")/lib_common.sh"
mkdir -p data
make_synthetic data 64 100000 10000 >/dev/null
write_tiny_config base.yaml data
for shape in 8:1 4:2 2:4; do
  b=${shape%%:*}; k=${shape#*:}
  "$EMBER" train -c base.yaml --set train.steps=20 --set optim.warmup_steps=5 --set log.every=1 \
    --set train.micro_batch=$b --set train.grad_accum=$k --set eval.every=0 --run-dir runs/b$b 2>b$b.err >/dev/null \
    || { cat b$b.err; fail "training with micro_batch $b x grad_accum $k"; }
done
"$PY" - <<'PY' || fail "accumulated steps differ from the full batch"
import json
import torch
from safetensors.torch import load_file

def losses(run):
    return [r["loss"] for r in map(json.loads, open(f"runs/{run}/metrics.jsonl")) if r["kind"] == "train"]

def params(run):
    return load_file(f"runs/{run}/checkpoints/step_20/model.safetensors")

full, full_p = losses("b8"), params("b8")
assert len(full) == 20, len(full)
scale = max(t.abs().max().item() for t in full_p.values())
for run in ["b4", "b2"]:
    got = losses(run)
    assert len(got) == 20, (run, len(got))
    worst = max(abs(a - b) / abs(a) for a, b in zip(full, got))
    assert worst < 1e-5, (run, worst)
    p = params(run)
    assert p.keys() == full_p.keys()
    diff = max((p[n] - full_p[n]).abs().max().item() for n in p)
    assert diff < 1e-4 * scale, (run, diff, scale)
    print(f"{run}: loss rel. diff {worst:.2e}, parameter diff {diff:.2e} (scale {scale:.3f})")
PY
echo "gradient accumulation matches the full batch"
