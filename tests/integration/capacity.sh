# ember capacity end to end: a trained ember run, an HF-style sharded bf16 checkpoint written by
# Python (mu and sigma checked against numpy), .npy, a comparison table, --sample, --plot, bound.
source "$(dirname "$0")/lib_common.sh"
mkdir -p data
make_synthetic data 64 20000 4000 >/dev/null
write_tiny_config c.yaml data
# capacity reads only the checkpoint's embedding table (checked against numpy on the same file): a
# short training gives one.
"$EMBER" train -c c.yaml --set train.steps=4 --set optim.warmup_steps=2 --set eval.every=4 --set checkpoint.every=4 \
  >/dev/null 2>&1 || fail "training failed"

# A Hugging Face style sharded checkpoint in bf16 (with zero rows), and the same matrix as .npy.
"$PY" - <<'PY' || fail "could not write the HF checkpoint"
import json, os, numpy as np
from safetensors import TensorSpec, serialize_file
def bf16(a):  # float32 -> bfloat16 bits (numpy has no bfloat16), rounded to nearest even as torch rounds
    b = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
def save_bf16(tensors, path):  # safetensors' own writer, each tensor stored as BF16
    serialize_file({k: TensorSpec(dtype="bfloat16", shape=v.shape, data_ptr=v.ctypes.data, data_len=v.nbytes)
                    for k, v in tensors.items()}, path, None)
rng = np.random.default_rng(0)
V, d = 3000, 96
emb = bf16(rng.standard_normal((V, d)) + 0.15)
emb[[7, 100, 2999]] = 0
os.makedirs("hf", exist_ok=True)
save_bf16({"model.layers.0.mlp.w": bf16(rng.standard_normal((8, 8)))}, "hf/model-00001-of-00002.safetensors")
save_bf16({"model.embed_tokens.weight": emb, "model.norm.weight": bf16(np.ones(d))}, "hf/model-00002-of-00002.safetensors")
emb = (emb.astype(np.uint32) << 16).view(np.float32)  # the stored bf16 values, exactly
json.dump({"metadata": {}, "weight_map": {"model.layers.0.mlp.w": "model-00001-of-00002.safetensors",
           "model.embed_tokens.weight": "model-00002-of-00002.safetensors",
           "model.norm.weight": "model-00002-of-00002.safetensors"}}, open("hf/model.safetensors.index.json", "w"))
x = emb.astype(np.float64)
np.save("emb.npy", emb)
x = x[np.linalg.norm(x, axis=1) > 0]
x /= np.linalg.norm(x, axis=1, keepdims=True)
c = (x @ x.T)[np.triu_indices(len(x), 1)]
json.dump({"mu": c.mean(), "sigma": c.std(ddof=1), "max": c.max()}, open("truth.json", "w"))
PY
# The ember run and the sharded checkpoint in one call: one JSON object per input, each checked.
"$EMBER" capacity runs/tiny hf --json >run_hf.json || fail "capacity on a run and the sharded checkpoint"
# An ember run: the tied input embedding (64 x 64), against numpy on the checkpoint's table.
"$PY" - <<'PY' || fail "capacity of the ember run disagrees with numpy"
import json, numpy as np
from safetensors.numpy import load_file
r = json.load(open("run_hf.json"))[0]
w = load_file("runs/tiny/checkpoints/step_4/model.safetensors")["embedding.weight"].astype(np.float64)
x = w / np.linalg.norm(w, axis=1, keepdims=True)
c = (x @ x.T)[np.triu_indices(len(x), 1)]
assert r["format"] == "ember" and r["V"] == 64 and r["d"] == 64 and r["pairs"] == 64 * 63 // 2, r
assert abs(r["mu"] - c.mean()) < 1e-6 and abs(r["sigma"] - c.std(ddof=1)) < 1e-6, (r["mu"], c.mean(), r["sigma"], c.std(ddof=1))
assert abs(r["epsilon"] - (c.mean() + 2 * c.std(ddof=1))) < 1e-6
assert r["class"] in ("1", "2", "indeterminate") and "tied input embedding" in r["tensor"] and r["head"] == "tied", r
PY
"$EMBER" capacity emb.npy hf/model.safetensors.index.json --sample 200000 --seed 3 --json >sampled.json || fail "--sample"
"$PY" - <<'PY' || fail "capacity of the HF checkpoint disagrees with numpy"
import json
t = json.load(open("truth.json"))
r = json.load(open("run_hf.json"))[1]
assert r["format"] == "safetensors (sharded)" and r["tensor"] == "model.embed_tokens.weight" and r["dtype"] == "bf16", r
assert r["input_rows"] == 3000 and r["zero_rows_dropped"] == 3 and r["V"] == 2997 and r["d"] == 96, r
assert r["head"] == "tied" and r["vocabulary_directions"] == 2997, r  # no lm_head.weight in the index
assert abs(r["mu"] - t["mu"]) < 1e-6 and abs(r["sigma"] - t["sigma"]) < 1e-6, (r, t)
assert abs(r["max_cosine"] - t["max"]) < 1e-5 and not r["sampled"] and r["method"] == "exact", r
for key in ("epsilon", "epsilon_3sigma", "class", "capacity", "capacity_full_form", "capacity_single_constant", "capacity_jl"):
    assert key in r, key
s = json.load(open("sampled.json"))
assert [x["format"] for x in s] == ["npy", "safetensors (sharded)"], s
for x in s:
    assert x["sampled"] and x["method"] == "sampled" and x["pairs"] == 200000
    assert x["epsilon_ci"]["low"] <= r["epsilon"] <= x["epsilon_ci"]["high"], (x["epsilon_ci"], r["epsilon"])
PY

# Several inputs: one comparison table (its run also draws the histogram figure, checked below),
# sampled rows labelled; the Gram identity agrees. The test build has PLplot (scripts/setup.sh
# installs libplplot-dev).
"$EMBER" capacity runs/tiny hf emb.npy --plot hist.png >table.txt 2>plot.err \
  || { cat plot.err; fail "comparison table with --plot (needs libplplot-dev)"; }
[ "$(grep -c -E '^(runs/tiny|hf|emb.npy) ' table.txt)" -eq 3 ] || { cat table.txt; fail "expected 3 rows"; }
grep -q "capacity(full)" table.txt && grep -q "full form max_k" table.txt || fail "table lacks labelled capacities"
"$EMBER" capacity emb.npy --sample 5000 | grep -q "SAMPLED estimate from 5000 random pairs" || fail "sampled label"
"$EMBER" capacity hf --moments --json >moments.json || fail "--moments"
"$PY" -c "
import json; a = json.load(open('run_hf.json'))[1]; b = json.load(open('moments.json'))[0]
assert abs(a['mu'] - b['mu']) < 1e-7 and abs(a['sigma'] - b['sigma']) < 1e-7, (a, b)" || fail "Gram identity"

# The histogram figure (PNG).
head -c 8 hist.png | od -An -c | grep -q "P   N   G" || fail "--plot did not write a PNG"
[ "$(stat -c %s hist.png)" -gt 10000 ] || fail "--plot wrote a PNG of $(stat -c %s hist.png) bytes"
# A figure that cannot be written is refused before the pass (PLplot would abort after it).
expect_error "--plot: cannot write '/proc/ember_hist.png'" "$EMBER" capacity runs/tiny --plot /proc/ember_hist.png

# bound --constants: the full form with one's own C, a, b, c, against its closed form.
"$EMBER" capacity bound --d 4096 --eps 0.0645 --constants 0.9,1.07,1.45,0.97 --json >own.json || fail "bound --constants"
"$PY" -c "
import json, math
b = json.load(open('own.json'))[0]['capacity_full_form']
C, a, bb, c, d, eps = 0.9, 1.07, 1.45, 0.97, 4096, 0.0645
want = math.ceil((d * math.exp((eps**2 * d**c / C) ** (1 / bb))) ** (1 / a))  # max_k of the full form
assert b['constants'] == {'C': C, 'a': a, 'b': bb, 'c': c} and abs(b['value'] / want - 1) < 1e-9, (b, want)" \
  || fail "bound --constants does not use the given constants"

# bound: the paper's Llama 2 7B row.
"$EMBER" capacity bound --d 4096 --eps 0.0645 --json >bound.json || fail "bound"
"$PY" -c "
import json; b = json.load(open('bound.json'))[0]
assert abs(b['capacity_full_form']['value'] / 3.99e7 - 1) < 0.01 and b['class'] == '2', b
assert abs(b['capacity_jl']['value'] - 8.4) < 0.1 and b['capacity'] == '3.99e+07', b" || fail "bound values"
"$EMBER" capacity bound --d 1152 --eps 0.20164 | grep -q "indeterminate" || fail "Gemma 3 1B is indeterminate"

# Bad inputs: one line, non-zero exit.
"$PY" - <<'PY'
import numpy as np
from safetensors.numpy import save_file
save_file({"model.embed_tokens.weight": np.random.randn(50).astype(np.float32)}, "onedim.safetensors")
m = np.random.randn(20, 8).astype(np.float32); m[5, 2] = np.nan
np.save("nan.npy", m)
save_file({"wte.weight": np.random.randn(64, 64).astype(np.float32)}, "trunc.safetensors")
PY
truncate -s -100 trunc.safetensors
expect_error "hf/model.safetensors.index.json: the index has no tensor 'nope'" "$EMBER" capacity hf --tensor nope
expect_error "onedim.safetensors [model.embed_tokens.weight]: expected a 2-D" "$EMBER" capacity onedim.safetensors
expect_error "nan.npy: 1 row(s) contain NaN or Inf values (first: row 5)" "$EMBER" capacity nan.npy
expect_error "trunc.safetensors: tensor 'wte.weight' has data offsets outside the file" "$EMBER" capacity trunc.safetensors
expect_error "'missing' does not exist" "$EMBER" capacity missing
expect_error "--sample and --moments exclude each other" "$EMBER" capacity hf --sample 10 --moments
expect_error "--block" "$EMBER" capacity hf --block 0
expect_error "--block" "$EMBER" capacity hf --moments --block -3
expect_error "capacity: give one or more inputs" "$EMBER" capacity
expect_error "epsilon must be in (0, 1]" "$EMBER" capacity bound --d 4096 --eps 0
# A degenerate matrix (nearly parallel rows: mu + 2 sigma > 1) is a result, not an error.
"$PY" -c "
import numpy as np
m = np.zeros((42, 16), dtype=np.float32); m[:40, 0] = 1; m[40, 1] = 1; m[41, 2] = 1
np.save('degenerate.npy', m)"
"$EMBER" capacity degenerate.npy --json >degenerate.json || fail "a degenerate matrix failed the command"
"$PY" - <<'PY' || fail "degenerate report"
import json
r = json.load(open("degenerate.json"))[0]
assert r["epsilon"] > 1 and r["class"] == "1" and r["capacity"] == "indeterminate", r
assert r["capacity_full_form"]["value"] is None and r["capacity_jl"]["value"] is None, r
PY
"$EMBER" capacity degenerate.npy | grep -q "outside (0, 1\]" || fail "the table does not say the epsilon is degenerate"
echo "ember capacity works end to end"
