# eval.capacity_every: the trainer logs the sampled epsilon (mu + 2 sigma of pairwise cosines) of the
# input embedding and of the output head to metrics.jsonl. Checked against an exact all-pairs
# computation in numpy on the checkpoint written at the same step, for an untied model (two
# different matrices) and for LEV (the input table is generated, so it is materialised).
source "$(dirname "$0")/lib_common.sh"
mkdir -p data
make_synthetic data 64 100000 10000 >/dev/null
write_tiny_config base.yaml data
for kind in untied lev; do
  "$EMBER" train -c base.yaml --set train.steps=10 --set optim.warmup_steps=2 --set eval.capacity_every=5 \
    --set eval.capacity_pairs=400000 --set model.embedding.kind=$kind --set checkpoint.every=5 --run-dir runs/$kind \
    >/dev/null 2>$kind.err || { cat $kind.err; fail "training $kind with eval.capacity_every"; }
  grep -q "geometry step      5 | input eps .* | head eps .* | sampled, 400000 pairs" $kind.err \
    || { cat $kind.err; fail "geometry line"; }
done
"$EMBER" capacity runs/lev/checkpoints/step_10 --json >lev_capacity.json || fail "ember capacity on the LEV run"
"$PY" - <<'PY' || fail "logged epsilon differs from the exact one"
import json
import numpy as np
from safetensors.numpy import load_file

def exact(m):
    x = m.astype(np.float64)
    x = x[np.linalg.norm(x, axis=1) > 0]
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    c = (x @ x.T)[np.triu_indices(len(x), 1)]
    return c.mean() + 2 * c.std(ddof=1)

for kind in ["untied", "lev"]:
    recs = [r for r in map(json.loads, open(f"runs/{kind}/metrics.jsonl")) if r["kind"] == "capacity"]
    assert [r["step"] for r in recs] == [5, 10], recs
    for r in recs:
        assert r["method"] == "sampled" and r["pairs"] == 400000 and r["tied"] is False, r
        p = load_file(f"runs/{kind}/checkpoints/step_{r['step']}/model.safetensors")
        head = exact(p["head.weight"])
        assert abs(r["head_epsilon"] - head) < 0.01, (kind, r["step"], r["head_epsilon"], head)
        lo, hi = r["head_epsilon_ci"]
        assert lo - 0.005 <= head <= hi + 0.005, (kind, lo, head, hi)
        if kind == "untied":
            inp = exact(p["embedding.weight"])
            assert abs(r["input_epsilon"] - inp) < 0.01, (kind, r["input_epsilon"], inp)
            assert abs(inp - head) > 1e-3, "input and head are different matrices"
        print(kind, r["step"], "input", round(r["input_epsilon"], 4), "head", round(r["head_epsilon"], 4), round(head, 4))
# LEV: the input table exists only materialised; `ember capacity` materialises it exactly.
lev = [r for r in map(json.loads, open("runs/lev/metrics.jsonl")) if r["kind"] == "capacity"][-1]
cap = json.load(open("lev_capacity.json"))
cap = cap[0] if isinstance(cap, list) else cap
eps = cap.get("epsilon", cap.get("eps"))
assert abs(lev["input_epsilon"] - eps) < 0.01, (lev["input_epsilon"], eps)
PY
expect_error "eval.capacity_pairs" "$EMBER" train -c base.yaml --set eval.capacity_pairs=1
echo "geometry during training matches the exact epsilon"
