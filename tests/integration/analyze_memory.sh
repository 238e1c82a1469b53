# ember analyze memory: on a checkpoint crafted so that the answer is known. With the theta gate's
# weights 0 and its bias -30 (theta ~ 0: no update) and the alpha gate's weights 0, every token
# forgets alpha = sigmoid(b_alpha) and the memory weights shrink as (1 - alpha)^t, so |W1_t| / |W1_0|
# at the chunk ending at token t (counting the persistent tokens) is (1 - alpha)^t; the forget bias
# it prints is the checkpoint's. Also its text table, --seq-len, and bad input.
source "$(dirname "$0")/lib_common.sh"
mkdir -p data
make_synthetic data 64 20000 4000 >/dev/null
write_tiny_config a.yaml data
"$EMBER" train -c a.yaml -c "$EMBER_SOURCE_DIR/configs/mixers/titans.yaml" --set train.steps=10 \
  --set optim.warmup_steps=2 --set eval.every=0 --set checkpoint.every=10 >train.out 2>&1 \
  || { cat train.out >&2; fail "training a Titans model failed"; }
ck=runs/tiny/checkpoints/step_10
"$PY" - "$ck" <<'PY' || fail "could not craft the checkpoint"
import hashlib, sys, numpy as np
from safetensors.numpy import load_file, save_file
ck = sys.argv[1]
w = {k: v.copy() for k, v in load_file(f"{ck}/model.safetensors").items()}  # in memory: the file is rewritten
for l in range(2):
    gates, bias = w[f"layers.{l}.mixer.w_gates"], w[f"layers.{l}.mixer.b_gates"]  # rows: theta, eta, alpha
    heads = bias.shape[1]
    gates[:heads] = 0
    gates[2 * heads:] = 0
    bias[0] = -30.0
    bias[2] = np.array([-3.0, -2.0, -4.0, -1.0], dtype=np.float32)[:heads] - l
save_file(w, f"{ck}/model.safetensors", metadata={"format": "pt"})
lines = [hashlib.sha256(open(f"{ck}/{f}", "rb").read()).hexdigest() + "  " + f
         for f in ["model.safetensors", "optim.safetensors", "state.json"]]
open(f"{ck}/SHA256SUMS", "w").write("\n".join(lines) + "\n")
PY
"$EMBER" analyze memory --ckpt $ck --data data/val_000.bin --batches 1 --batch-size 2 --seq-len 48 --json >m.json \
  || fail "analyze memory --json"
"$PY" - <<'PY' || fail "the memory diagnostics are not the constructed ones"
import json, math
m = json.load(open("m.json"))
assert len(m["layers"]) == 2, m.keys()
for l, layer in enumerate(m["layers"]):
    biases = [-3.0 - l, -2.0 - l, -4.0 - l, -1.0 - l]
    assert all(abs(a - b) < 1e-5 for a, b in zip(layer["alpha_bias"], biases)), layer["alpha_bias"]
    alphas = [1 / (1 + math.exp(-b)) for b in biases]
    ends = [c["end"] for c in layer["chunks"]]
    assert ends == sorted(ends) and ends[-1] == 48, ends
    for c in layer["chunks"]:
        t = c["end"] + 4  # the persistent tokens come first and forget too
        want = sum((1 - a) ** t for a in alphas) / len(alphas)  # |W1_t| / |W1_0| per head, averaged
        assert abs(c["w1_ratio"] - want) < 1e-5 * max(want, 1e-3) and abs(c["w2_ratio"] - want) < 1e-5 * max(want, 1e-3), (l, c, want)
        assert c["theta"] < 1e-9, c
        assert abs(c["alpha"] - sum(alphas) / len(alphas)) < 1e-5, (c["alpha"], alphas)
print("alpha biases, gate means and weight decay as constructed")
PY
"$EMBER" analyze memory --ckpt $ck --data data/val_000.bin --batches 1 --batch-size 2 >m.txt || fail "analyze memory"
grep -q "forget-gate bias per head -3.000 -2.000 -4.000 -1.000" m.txt || { cat m.txt >&2; fail "text table lacks layer 0's biases"; }
grep -q "contribution" m.txt || fail "text table has no contribution column"
write_tiny_config b.yaml data
"$EMBER" train -c b.yaml --set train.steps=2 --set optim.warmup_steps=0 --set log.name=attn >/dev/null 2>&1 || fail "attention run"
expect_error "not titans" "$EMBER" analyze memory --ckpt runs/attn --data data/val_000.bin
expect_error "missing.bin" "$EMBER" analyze memory --ckpt $ck --data missing.bin
echo "analyze memory reports the constructed decay"
