# ember analyze alignment on a checkpoint whose answer is known by construction: one attention head
# with W_q = W_k = 30 I attends to itself (RMSNorm makes every |q| equal, so by Cauchy-Schwarz the
# self score is the largest, and equal scores only come with equal values); with W_v = I, W_o = 2 I
# and unit gains it adds 2 RMSNorm(x), a scaled copy of its residual input (cosine 1). An MLP with
# W_down = 0 adds nothing (cosine 0).
source "$(dirname "$0")/lib_common.sh"
mkdir -p data
make_synthetic data 64 20000 4000 >/dev/null
write_tiny_config a.yaml data
"$EMBER" train -c a.yaml --set train.steps=20 --set model.n_heads=1 >/dev/null 2>&1 || fail "training failed"
ck=runs/tiny/checkpoints/step_20
"$EMBER" analyze alignment --ckpt runs/tiny --data data/val_000.bin --batches 2 --json >trained.json || fail "alignment"
"$PY" - "$ck" <<'PY' || fail "could not craft the checkpoint"
import hashlib, sys, numpy as np
from safetensors.numpy import load_file, save_file
ck = sys.argv[1]
w = {k: v.copy() for k, v in load_file(f"{ck}/model.safetensors").items()}  # in memory: the file is rewritten
d = w["embedding.weight"].shape[1]
eye = np.eye(d, dtype=np.float32)
for l in range(2):
    p = f"layers.{l}."
    w[p + "mixer.wq"] = 30.0 * eye
    w[p + "mixer.wk"] = 30.0 * eye
    w[p + "mixer.wv"] = eye.copy()
    w[p + "mixer.wo"] = 2.0 * eye
    w[p + "mixer_norm.weight"] = np.ones(d, dtype=np.float32)
    w[p + "mlp.w_down"] = np.zeros_like(w[p + "mlp.w_down"])
save_file(w, f"{ck}/model.safetensors", metadata={"format": "pt"})
lines = []
for f in ["model.safetensors", "optim.safetensors", "state.json"]:
    lines.append(hashlib.sha256(open(f"{ck}/{f}", "rb").read()).hexdigest() + "  " + f)
open(f"{ck}/SHA256SUMS", "w").write("\n".join(lines) + "\n")
PY
"$EMBER" analyze alignment --ckpt $ck --data data/val_000.bin --batches 2 --json >crafted.json || fail "alignment"
"$PY" - <<'PY' || fail "alignment values are not the constructed ones"
import json
r = json.load(open("crafted.json"))
assert r["tokens"] == 2 * 8 * 32, r["tokens"]
assert len(r["layers"]) == 2, r  # the tiny config has two layers
for layer in r["layers"]:
    assert layer["mixer_cos"] > 0.999, layer
    assert layer["mlp_cos"] == 0.0, layer
t = json.load(open("trained.json"))
assert len(t["layers"]) == 2, t
assert all(-1 <= l["mlp_cos"] <= 1 and l["mlp_cos"] != 0 for l in t["layers"]), t
PY
"$EMBER" analyze alignment --ckpt $ck --data data/val_000.bin --batches 1 | grep -q "rho_l" || fail "table output"
# More batches than the file holds: one pass, every token once (it used to wrap and count again).
"$EMBER" analyze alignment --ckpt $ck --data data/val_000.bin --batches 1000 --json >all.json || fail "alignment, all"
"$PY" -c "
import json; t = json.load(open('all.json'))['tokens']
assert 2 * 8 * 32 < t <= 4000 and t % 32 == 0, t" || fail "alignment counted tokens beyond one pass"
# --plot writes a PNG of both curves; a missing directory is a usage error before any work.
"$EMBER" analyze alignment --ckpt $ck --data data/val_000.bin --batches 1 --plot align.png >/dev/null || fail "--plot"
[ "$(head -c 8 align.png | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "align.png is not a PNG"
[ "$(stat -c %s align.png)" -gt 10000 ] || fail "align.png is suspiciously small"
expect_error "--plot: directory" "$EMBER" analyze alignment --ckpt $ck --data data/val_000.bin --plot nowhere/a.png
# Text needs the run's tokenizer, which these synthetic shards (no manifest.json) do not name.
echo "some prose" >notes.txt
expect_error "no manifest.json beside" "$EMBER" analyze alignment --ckpt $ck --data notes.txt
echo "alignment is 1 for a scaled copy and 0 for a silent MLP"
