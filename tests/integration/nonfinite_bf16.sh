# Non-finite losses stop the run with a clear message (or are skipped when configured), and
# bf16 autocast trains.
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
"$EMBER" train -c n.yaml --set train.precision=bf16 --set train.steps=60 --set log.name=bf16 >bf16.out 2>bf16.err \
  || { cat bf16.err; fail "bf16 training"; }
"$PY" - <<'PY' || fail "bf16 run did not learn"
import json
recs = [json.loads(l) for l in open("runs/bf16/metrics.jsonl") if '"train"' in l]
assert recs[-1]["loss"] < 0.75 * recs[0]["loss"], (recs[0]["loss"], recs[-1]["loss"])
PY
echo "non-finite handling and bf16 work"
