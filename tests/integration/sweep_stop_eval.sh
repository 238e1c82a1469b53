# A sweep stopped (SIGTERM to the sweep process alone) while a trained member is being evaluated:
# the evaluation's partial output goes, the member is unfinished (not failed), the sweep exits
# non-zero naming it, and the next sweep evaluates it without training it again.
source "$(dirname "$0")/lib_common.sh"
mkdir -p data
# A validation set whose evaluation (the whole split) takes ~3 s alone: the stop lands within a 0.1 s
# poll of its start, and the second sweep evaluates it all (3M tokens took that one 18 s).
make_synthetic data 64 20000 500000 >/dev/null
write_tiny_config base.yaml data
cat >s.yaml <<'YAML'
out: sw
configs: [base.yaml]
set: {train.steps: 4, optim.warmup_steps: 2, eval.every: 0, checkpoint.every: 4, log.every: 2}
grid:
  model.mixer.kind: [attention]
seeds: [1]
evals: [perplexity]
YAML
"$EMBER" sweep s.yaml >stop.out 2>&1 &
sweep=$!
for _ in $(seq 1 600); do  # the evaluation has started when its output file exists
  [ -e sw/attention/eval.json.tmp ] && break
  kill -0 "$sweep" 2>/dev/null || { cat stop.out >&2; fail "the sweep ended before its evaluation started"; }
  sleep 0.1
done
[ -e sw/attention/eval.json.tmp ] || { cat stop.out >&2; fail "the evaluation did not start within 60 s"; }
kill -TERM "$sweep"
rc=0; wait "$sweep" || rc=$?
[ "$rc" -ne 0 ] || { cat stop.out >&2; fail "a stopped sweep exited 0"; }
grep -q "evaluation stopped (the next sweep evaluates the trained member)" stop.out \
  || { cat stop.out >&2; fail "the stopped evaluation was not reported as such"; }
grep -q "stopped with 1 member(s) unfinished (attention); run it again to resume" stop.out \
  || { cat stop.out >&2; fail "the sweep did not name the unfinished member"; }
[ ! -e sw/attention/eval.json.tmp ] && [ ! -e sw/attention/eval.json ] \
  || fail "a stopped evaluation left its output"
"$EMBER" sweep s.yaml >again.out 2>&1 || { cat again.out >&2; fail "the second sweep failed"; }
grep -q "== attention: complete" again.out || { cat again.out >&2; fail "the member was not evaluated"; }
! grep -q "== attention: training" again.out || fail "the trained member was trained again"
[ -f sw/attention/eval.json ] || fail "no eval.json after the second sweep"
echo "a sweep stopped during an evaluation leaves the member unfinished and evaluates it next time"
