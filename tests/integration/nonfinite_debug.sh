# ember train --debug-nonfinite on a deliberately broken model (logits scaled by 1e38 overflow
# fp32 in the loss): the error names the first non-finite op and its scope, report.json says the
# same, and the batch it saved is the step's batch as numpy reads it. With on_nonfinite=skip each
# skipped step gets its own report; without the flag nothing is written.
source "$(dirname "$0")/lib_common.sh"
mkdir -p data
make_synthetic data 64 20000 4000 >/dev/null
write_tiny_config tiny.yaml data
broken=(--set model.embedding.output_scale=1e38 --set eval.every=0 --set checkpoint.every=0)
# train_fails "<substring>" args...: training stops with a non-zero exit and its last stderr line,
# the error, holds the substring (the lines before it are the run's log).
train_fails() {
  local want="$1"; shift
  local rc=0
  "$EMBER" train "$@" >out.txt 2>log.txt || rc=$?
  [ "$rc" -ne 0 ] || fail "expected training to stop: $*"
  tail -n 1 log.txt >err.txt
  grep -q '^ember: error: ' err.txt || { cat log.txt >&2; fail "the last line is not the error: $*"; }
  grep -qF -- "$want" err.txt || { cat err.txt >&2; fail "the error lacks '$want': $*"; }
}

train_fails "non-finite loss at step 1" -c tiny.yaml "${broken[@]}" --debug-nonfinite
# The op that made the first non-finite value from finite inputs: the loss head's fused pass, or an
# ATen op of its unfused pass (kernels.loss_head = aten).
grep -qE "first non-finite tensor: forward of micro-batch 0: output 0 of head and loss > (aten::|ember::softmax_xent_rows_)" err.txt ||
  { cat err.txt >&2; fail "the error does not name the first non-finite op in the loss"; }
grep -qF "[batches and report.json in $PWD/runs/tiny/nonfinite/step_1]" err.txt ||
  { cat err.txt >&2; fail "the error does not say where the report is"; }
"$PY" - <<'PY' || fail "report.json or batch_0.npy is wrong"
import json, numpy as np
r = json.load(open("runs/tiny/nonfinite/step_1/report.json"))
f = r["first_nonfinite"]
assert f["pass"] == "forward" and f["micro_batch"] == 0, f
assert f["scopes"] == ["head and loss"], f["scopes"]
assert f["op"].startswith("aten::") or f["op"] == "ember::softmax_xent_rows_", f["op"]
assert f["value"]["nan"] + f["value"]["inf"] > 0, f["value"]
assert all(i["nan"] == 0 and i["inf"] == 0 for i in f["inputs"]), f["inputs"]  # made from finite inputs
assert r["batches"] == ["batch_0.npy"], r["batches"]
b = np.load("runs/tiny/nonfinite/step_1/batch_0.npy")
assert b.shape == (8, 33) and b.dtype == np.int64 and b.min() >= 0 and b.max() < 64, (b.shape, b.dtype)
PY

# on_nonfinite=skip: three skipped steps, three reports, exit 0.
rm -rf runs
"$EMBER" train -c tiny.yaml "${broken[@]}" --set train.steps=3 --set optim.warmup_steps=1 --set train.on_nonfinite=skip \
  --set train.debug_nonfinite=true >skip.out 2>skip.err || { cat skip.err >&2; fail "skip run failed"; }
[ "$(ls runs/tiny/nonfinite | tr '\n' ' ')" = "step_1 step_2 step_3 " ] || fail "expected three reports: $(ls runs/tiny/nonfinite)"
[ "$(grep -c 'step skipped' skip.err)" -eq 3 ] || fail "three steps should be reported skipped"

# Without the flag the error is the plain one and nothing is written.
rm -rf runs
train_fails "non-finite loss at step 1 (loss" -c tiny.yaml "${broken[@]}"
! grep -q "first non-finite tensor" err.txt || fail "the trace ran without --debug-nonfinite"
[ ! -e runs/tiny/nonfinite ] || fail "a report was written without --debug-nonfinite"
echo "ok"
