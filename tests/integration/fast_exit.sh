# The ember binary ends with _exit() once its command has returned (tools/ember.cpp), skipping the
# libraries' static destructors; EMBER_FULL_EXIT=1 exits normally. Both ways must leave the same
# files and streams whole: output redirected to a file (fully buffered, flushed before _exit), the
# run's train.log (a log sink) and metrics, the checkpoint and the run lock released, and each exit
# status (0, a usage error's 2, a failed command's 1).
source "$(dirname "$0")/lib_common.sh"
mkdir -p data && make_synthetic data 64 20000 4000 >/dev/null
write_tiny_config t.yaml data
for way in fast full; do
  full=0
  [ "$way" = full ] && full=1
  EMBER_FULL_EXIT=$full "$EMBER" config --kinds >"kinds.$way" 2>&1 || fail "config --kinds ($way exit)"
  EMBER_FULL_EXIT=$full "$EMBER" train -c t.yaml --set log.name="$way" --set train.steps=4 --set optim.warmup_steps=1 \
    --set eval.every=0 --set checkpoint.every=0 >"train.$way.out" 2>"train.$way.err" || fail "training ($way exit)"
  rc=0
  EMBER_FULL_EXIT=$full "$EMBER" train --frobnicate >/dev/null 2>&1 || rc=$?
  [ "$rc" = 109 ] || fail "a usage error exited $rc, not CLI11's 109 ($way exit)"
  rc=0
  EMBER_FULL_EXIT=$full "$EMBER" eval runs/missing >/dev/null 2>&1 || rc=$?
  [ "$rc" = 1 ] || fail "a failed command exited $rc, not 1 ($way exit)"
done
cmp kinds.fast kinds.full || fail "config --kinds printed differently with the fast exit"
[ "$(wc -l <kinds.fast)" -gt 20 ] || fail "config --kinds printed too little: $(wc -l <kinds.fast) lines"
for way in fast full; do
  grep -q "final validation loss" "train.$way.out" || { cat "train.$way.out" >&2; fail "$way: stdout lacks its last line"; }
  grep -q "val ppl .* (final)" "runs/$way/train.log" || { tail -n3 "runs/$way/train.log" >&2; fail "$way: train.log lacks the final eval"; }
  tail -n1 "runs/$way/train.log" | grep -q "checkpoint runs/$way/checkpoints/step_4$" \
    || { tail -n3 "runs/$way/train.log" >&2; fail "$way: train.log lacks its last line"; }
  tail -n1 "runs/$way/metrics.jsonl" | grep -q '"kind":"eval"\|"kind": "eval"' \
    || { tail -n2 "runs/$way/metrics.jsonl" >&2; fail "$way: metrics.jsonl lacks the final eval"; }
  [ -d "runs/$way/checkpoints/step_4" ] || { ls -R "runs/$way" >&2; fail "$way: no final checkpoint"; }
  # The lock went with the process: the run resumes at once.
  "$EMBER" train --resume --run-dir "runs/$way" --set train.steps=5 >/dev/null 2>"resume.$way.err" \
    || { cat "resume.$way.err" >&2; fail "$way: the run did not resume after the exit"; }
done
# The two runs are the same training: their logged losses agree to the digit.
"$PY" - <<'PY' || fail "the fast and full exits trained differently"
import json
def losses(way):
    return [r["loss"] for r in map(json.loads, open(f"runs/{way}/metrics.jsonl")) if r["kind"] == "train"]
assert losses("fast") == losses("full") and len(losses("fast")) >= 1, (losses("fast"), losses("full"))
PY
echo "fast_exit: the fast and full exits leave the same streams and files"
