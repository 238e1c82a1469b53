# optim.grad_clip reaches the update: one AdamW step from the same start with the gradients clipped
# to half and to a quarter of their global norm (the norm the unclipped run logs). With
# optim.eps = 1e3 the step is lr g / (|g| + eps), linear in g to 0.1%, so the parameters move by
# d, d/2 and d/4: (W_none - W_half) = 2 (W_half - W_quarter) within 1% in norm, whatever the start.
source "$(dirname "$0")/lib_common.sh"
mkdir -p data
make_synthetic data 64 20000 4000 >/dev/null
write_tiny_config base.yaml data
step() {  # name grad_clip
  "$EMBER" train -c base.yaml --set train.steps=1 --set optim.warmup_steps=0 --set optim.schedule=constant \
    --set optim.lr=1.0 --set optim.eps=1000 --set optim.weight_decay=0 --set optim.grad_clip="$2" --set log.every=1 \
    --set eval.every=0 --set checkpoint.every=1 --run-dir "runs/$1" >"$1.out" 2>"$1.err" \
    || { cat "$1.err"; fail "training with optim.grad_clip=$2"; }
}
step none 0
norm=$("$PY" -c "import json; print([r for r in map(json.loads, open('runs/none/metrics.jsonl')) if r['kind'] == 'train'][0]['grad_norm'])")
step half "$("$PY" -c "print($norm / 2)")"
step quarter "$("$PY" -c "print($norm / 4)")"
step loose 1e9  # a limit above the norm changes nothing
"$PY" - <<'PY' || fail "optim.grad_clip does not scale the update as it should"
import numpy as np
from safetensors.numpy import load_file
def flat(run):
    p = load_file(f"runs/{run}/checkpoints/step_1/model.safetensors")
    return np.concatenate([p[k].astype(np.float64).ravel() for k in sorted(p)])
none, half, quarter, loose = (flat(r) for r in ("none", "half", "quarter", "loose"))
assert np.array_equal(none, loose), "a clip limit above the gradient norm changed the step"
ratio = np.linalg.norm(none - half) / np.linalg.norm(half - quarter)
print(f"|W_none - W_half| / |W_half - W_quarter| = {ratio:.5f} (2 when clipping scales the gradients)")
assert abs(ratio - 2) < 0.02, ratio
PY
echo "grad_clip: the step scales with the clipped norm"
