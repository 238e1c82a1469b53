# ember analyze attention: the first-token mass and mean gate per layer, on a trained gated model
# and on a checkpoint crafted so that the answers are known (W_q = 0: uniform causal attention,
# first-token mass = mean over t = 1..T-1 of 1/(t+1); W_theta = 0: every gate is 1/2).
source "$(dirname "$0")/lib_common.sh"
mkdir -p data
make_synthetic data 64 20000 4000 >/dev/null
write_tiny_config a.yaml data
"$EMBER" train -c a.yaml --set train.steps=20 --set model.mixer.kind=gated_attention >/dev/null 2>&1 \
  || fail "training a gated model failed"
"$EMBER" analyze attention --ckpt runs/tiny --data data/val_000.bin --batches 2 --json >trained.json || fail "analyze"
ck=runs/tiny/checkpoints/step_20
"$PY" - "$ck" <<'PY' || fail "could not craft the checkpoint"
import hashlib, sys, numpy as np
from safetensors.numpy import load_file, save_file
ck = sys.argv[1]
w = {k: v.copy() for k, v in load_file(f"{ck}/model.safetensors").items()}  # in memory: the file is rewritten
for l in range(2):
    w[f"layers.{l}.mixer.wq"] = np.zeros_like(w[f"layers.{l}.mixer.wq"])
    w[f"layers.{l}.mixer.wg"] = np.zeros_like(w[f"layers.{l}.mixer.wg"])
save_file(w, f"{ck}/model.safetensors", metadata={"format": "pt"})
lines = [hashlib.sha256(open(f"{ck}/{f}", "rb").read()).hexdigest() + "  " + f
         for f in ["model.safetensors", "optim.safetensors", "state.json"]]
open(f"{ck}/SHA256SUMS", "w").write("\n".join(lines) + "\n")
PY
"$EMBER" analyze attention --ckpt $ck --data data/val_000.bin --batches 2 --json >crafted.json || fail "analyze crafted"
"$PY" - <<'PY' || fail "attention diagnostics are not the constructed ones"
import json
T = 32
want = sum(1.0 / (t + 1) for t in range(1, T)) / (T - 1)
c = json.load(open("crafted.json"))
assert c["tokens"] == 2 * 8 * 32, c["tokens"]
assert len(c["layers"]) == 2, c  # the tiny config has two layers
for layer in c["layers"]:
    assert abs(layer["first_token_mass"] - want) < 1e-6, (layer, want)
    assert layer["mean_gate"] == 0.5, layer
t = json.load(open("trained.json"))
assert len(t["layers"]) == 2, t
assert all(0 < l["first_token_mass"] <= 1 and 0 < l["mean_gate"] < 1 for l in t["layers"]), t
PY
# A plain attention model has no gate: null in JSON, "-" in the table.
"$EMBER" train -c a.yaml --set train.steps=5 --set optim.warmup_steps=1 --set log.name=plain >/dev/null 2>&1 || fail "training plain"
"$EMBER" analyze attention --ckpt runs/plain --data data/val_000.bin --batches 1 --json >plain.json || fail "plain"
"$PY" -c "import json; l = json.load(open('plain.json'))['layers']; assert len(l) == 2 and all(x['mean_gate'] is None for x in l)" \
  || fail "plain attention reports a gate"
"$EMBER" analyze attention --ckpt runs/plain --data data/val_000.bin --batches 1 | grep -q "first-token mass" \
  || fail "table output"
expect_error "'nowhere' is neither a run nor a checkpoint directory" "$EMBER" analyze attention --ckpt nowhere --data data/val_000.bin
echo "attention sink and gate diagnostics match the constructed checkpoint"
