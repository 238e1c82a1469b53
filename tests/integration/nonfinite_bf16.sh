# Non-finite losses stop the run with a clear message (or are skipped when configured: the
# skipped steps leave weights and optimizer state alone), and bf16 autocast trains: its losses
# are not fp32's but within 2% of them, its master weights stay fp32.
source "$(dirname "$0")/lib_common.sh"
mkdir -p data
make_synthetic data 64 20000 4000 >/dev/null
write_tiny_config n.yaml data
rc=0
"$EMBER" train -c n.yaml --set model.init_std=1e30 --set log.name=nan >out.txt 2>err.txt || rc=$?
[ "$rc" -ne 0 ] || fail "a non-finite step should stop the run"
tail -n 1 err.txt | grep -q "^ember: error: non-finite .* at step 1 .*train.on_nonfinite=skip" \
  || { cat err.txt; fail "the last line does not name the non-finite step and how to skip it"; }
[ ! -d runs/nan/checkpoints ] || fail "a failed run left a checkpoint"
"$EMBER" train -c n.yaml --set model.init_std=1e30 --set train.on_nonfinite=skip --set train.steps=3 --set optim.warmup_steps=1 \
  --set log.name=skip >/dev/null 2>skip.err || { cat skip.err; fail "skip mode should finish"; }
[ "$(grep -c 'step skipped' skip.err)" -eq 3 ] || fail "expected 3 skipped steps"
grep -q '"skipped_steps": 3' runs/skip/checkpoints/step_3/state.json || fail "skipped steps not recorded"
"$EMBER" train -c n.yaml --set model.init_std=1e30 --set train.on_nonfinite=skip --set train.steps=1 --set optim.warmup_steps=1 \
  --set log.name=skip1 >/dev/null 2>skip1.err || { cat skip1.err; fail "skip mode should finish (1 step)"; }
"$PY" - <<'PY' || fail "skipped steps changed the weights or the optimizer state"
import numpy as np
from safetensors.numpy import load_file
one, three = (load_file(f"runs/{r}/checkpoints/step_{s}/model.safetensors") for r, s in (("skip1", 1), ("skip", 3)))
assert one.keys() == three.keys()
for k in one:  # the same start (seed), and nothing applied after 1 or 3 skipped steps
    assert np.isfinite(three[k]).all() and one[k].dtype == three[k].dtype and np.array_equal(one[k], three[k]), k
state = load_file("runs/skip/checkpoints/step_3/optim.safetensors")
moments = [k for k in state if k.startswith("exp_avg")]
assert moments, list(state)
for k in moments:  # exp_avg and exp_avg_sq never received a gradient
    assert np.abs(state[k]).max() == 0, k
PY
"$EMBER" train -c n.yaml --set train.precision=bf16 --set train.steps=60 --set log.name=bf16 >bf16.out 2>bf16.err \
  || { cat bf16.err; fail "bf16 training"; }
"$EMBER" train -c n.yaml --set train.steps=60 --set log.name=fp32 >fp32.out 2>fp32.err || { cat fp32.err; fail "fp32 training"; }
"$PY" - <<'PY' || fail "bf16 run did not learn, or did not run in bf16"
import json
from safetensors import safe_open
def losses(run):
    return [json.loads(l)["loss"] for l in open(f"runs/{run}/metrics.jsonl") if '"train"' in l]
bf16, fp32 = losses("bf16"), losses("fp32")
assert bf16[-1] < 0.75 * bf16[0], (bf16[0], bf16[-1])
assert bf16[0] != fp32[0] and abs(bf16[0] / fp32[0] - 1) < 0.02, ("bf16 vs fp32 at the first log", bf16[0], fp32[0])
with safe_open("runs/bf16/checkpoints/step_60/model.safetensors", "np") as f:
    dtypes = {str(f.get_slice(k).get_dtype()) for k in f.keys()}
assert dtypes == {"F32"}, dtypes
PY
echo "non-finite handling and bf16 work"
