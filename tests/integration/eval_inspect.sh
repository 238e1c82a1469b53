# ember eval / inspect / config / prepare end to end, and the checkpoint is readable by Python.
source "$(dirname "$0")/lib_common.sh"
mkdir -p data docs
make_synthetic data 64 20000 4000 >/dev/null
write_tiny_config e.yaml data
"$EMBER" train -c e.yaml --set train.steps=20 >/dev/null 2>&1 || fail "training failed"
"$EMBER" eval runs/tiny --batches 2 --json >eval.json || fail "eval"
"$PY" - <<'PY' || fail "eval JSON or checkpoint contents are wrong"
import json, math
from safetensors.numpy import load_file
r = json.load(open("eval.json"))
assert r["step"] == 20 and abs(math.exp(r["loss"]) - r["perplexity"]) < 1e-6 * r["perplexity"], r
assert r["tokens"] == 2 * 8 * 32, r
w = load_file("runs/tiny/checkpoints/step_20/model.safetensors")
assert w["embedding.weight"].shape == (64, 64) and "head.weight" not in w  # tied
assert w["layers.1.mlp.w_down"].shape == (64, 128)
o = load_file("runs/tiny/checkpoints/step_20/optim.safetensors")
assert int(o["__steps__"]) == 20
PY
# --device and --precision: the same loss on the CPU named explicitly; bf16 autocast close to fp32;
# CUDA is an error where ember sees no CUDA device (here CUDA_VISIBLE_DEVICES hides any GPU), before
# any work.
"$EMBER" eval runs/tiny --batches 2 --json --device cpu >cpu.json || fail "eval --device cpu"
"$EMBER" eval runs/tiny --batches 2 --json --device cpu --precision bf16 >bf16.json || fail "eval --precision bf16"
"$PY" - <<'PY' || fail "eval --device / --precision"
import json
a, c, b = json.load(open("eval.json")), json.load(open("cpu.json")), json.load(open("bf16.json"))
assert c["device"] == "cpu" and c["precision"] == "fp32" and c["loss"] == a["loss"], (a, c)
assert b["precision"] == "bf16" and abs(b["loss"] - a["loss"]) < 0.05 * a["loss"] and b["loss"] != a["loss"], (a, b)
PY
expect_error "--device: 'cuda' requested but no CUDA device is available" \
  env CUDA_VISIBLE_DEVICES= "$EMBER" eval runs/tiny --device cuda
# --buckets: by the target's frequency in training (these synthetic shards have no counts file, so
# they are counted); the buckets add up to the whole.
"$EMBER" eval runs/tiny --batches 2 --json --buckets >buckets.json 2>buckets.err || { cat buckets.err; fail "eval --buckets"; }
grep -q "counting the 1 training shard" buckets.err || fail "eval --buckets did not say it counted the shards"
"$PY" - <<'PY' || fail "eval --buckets JSON"
import json
r = json.load(open("buckets.json"))
b = r["buckets"]
assert len(b) >= 1 and sum(x["tokens"] for x in b) == r["tokens"] == 2 * 8 * 32, r
assert abs(sum(x["loss"] * x["tokens"] for x in b) / r["tokens"] - r["loss"]) < 1e-6, r
assert b[0]["frequency_lo"] == 0 and b[-1]["frequency_hi"] == 1, b
assert all(x["frequency_hi"] == y["frequency_lo"] for x, y in zip(b, b[1:])), b
PY
"$EMBER" eval runs/tiny --batches 1 --buckets | grep -q "frequency in training" || fail "eval --buckets table"
expect_error "--bucket-edges: expected increasing relative frequencies in (0, 1)" \
  "$EMBER" eval runs/tiny --batches 1 --buckets --bucket-edges 1e-4,1e-6
# Several named data sets in one call: each equals its own single evaluation; the table names them.
"$EMBER" eval runs/tiny --batches 2 --json --data 'train=data/train_*.bin' >train_only.json || fail "eval --data NAME="
"$EMBER" eval runs/tiny --batches 2 --json --data 'val=data/val_*.bin' --data 'train=data/train_*.bin' \
  --buckets >named.json 2>/dev/null || fail "eval with two named data sets"
"$PY" - <<'PY' || fail "eval with named data sets"
import json
one, train, named = json.load(open("eval.json")), json.load(open("train_only.json")), json.load(open("named.json"))
d = named["datasets"]
assert [x["data"] for x in d] == ["val", "train"] and "loss" not in named, named
assert d[0]["loss"] == one["loss"] and d[1]["loss"] == train["loss"] != one["loss"], (d, one, train)
assert all(sum(b["tokens"] for b in x["buckets"]) == x["tokens"] for x in d), d
PY
"$EMBER" eval runs/tiny --batches 1 --data 'a=data/val_*.bin' --data 'b=data/train_*.bin' >table.txt
grep -qE '^a +256 ' table.txt && grep -qE '^b +256 ' table.txt || { cat table.txt >&2; fail "eval's data set table"; }
expect_error "--data b: 'nowhere/*.bin' matches no shard file" "$EMBER" eval runs/tiny --data 'a=data/val_*.bin' --data 'b=nowhere/*.bin'
# inspect: the per-layer table and totals agree with the closed form.
"$EMBER" inspect e.yaml --json >inspect.json
"$PY" - <<'PY' || fail "inspect totals are wrong"
import json
r = json.load(open("inspect.json"))
V, d, L, f = 64, 64, 2, 128
layer = 4 * d * d + 3 * d * f + 2 * d
assert r["total_params"] == V * d + L * layer + d, r
assert [l["d_ff"] for l in r["layers"]] == [f, f]
# MFU's count: attention's QK^T and PV in full (3 x 4 d T per layer), and the causal-halved one.
T = r["seq_len"]
full = 6 * (L * (4 * d * d + 3 * d * f) + V * d) + 3 * L * 4 * d * T
assert r["train_flops_per_token"] == full, (r["train_flops_per_token"], full)
assert r["causal_train_flops_per_token"] == full - 3 * L * 2 * d * T, r
PY
"$EMBER" inspect e.yaml >inspect.txt || fail "inspect"
grep -q "total_params" inspect.txt || fail "inspect table"
grep -q "attention scores in full, as MFU counts them; causal-halved:" inspect.txt \
  || fail "inspect states MFU's FLOP convention"
"$EMBER" config -c e.yaml --set optim.lr=0.01 | grep -q "lr: 0.01" || fail "config prints resolved keys"
# prepare bytes: documents split by path hash, manifest with hashes.
printf 'hello world\n' >docs/a.txt; printf 'second document\n' >docs/b.txt; printf 'third\n' >docs/c.txt
"$EMBER" prepare bytes docs --out prepared --val-fraction 0.5 >prep.out || fail "prepare"
"$PY" - <<'PY' || fail "prepared shards are wrong"
import json, numpy as np, glob
m = json.load(open("prepared/manifest.json"))
assert m["vocab_size"] == 256 and len(m["sources"]) == 3
total = 0
for path in glob.glob("prepared/*.bin"):
    raw = open(path, "rb").read()
    header = np.frombuffer(raw[:1024], dtype=np.int32)
    assert header[0] == 20240520 and header[2] * 2 + 1024 == len(raw)
    total += header[2]
assert total == m["train_tokens"] + m["val_tokens"] == 12 + 16 + 6 + 3
PY
echo "eval, inspect, config and prepare work end to end"
