# A run directory belongs to one trainer at a time: a second `ember train` (or a --resume) on a
# live run fails at once naming the holder's pid and changes nothing there. SIGINT saves a
# checkpoint at the current step and exits 0; the run then resumes from that step.
source "$(dirname "$0")/lib_common.sh"
mkdir -p data
make_synthetic data 64 200000 20000 >/dev/null
write_tiny_config base.yaml data
"$EMBER" train -c base.yaml --set train.steps=100000 --set checkpoint.every=50000 --run-dir runs/live \
  2>live.err >live.out &
pid=$!
for _ in $(seq 1 3000); do
  grep -q '"kind":"train"' runs/live/metrics.jsonl 2>/dev/null && break
  kill -0 $pid 2>/dev/null || { cat live.err; fail "the first trainer ended early"; }
  sleep 0.01
done
grep -q '"kind":"train"' runs/live/metrics.jsonl || fail "the first trainer logged nothing"
expect_error "run directory 'runs/live' is in use by another ember process (pid $pid)" \
  "$EMBER" train -c base.yaml --set train.steps=7 --set optim.warmup_steps=1 --run-dir runs/live
expect_error "is in use by another ember process (pid $pid)" "$EMBER" train --resume --run-dir runs/live
grep -q "steps: 100000" runs/live/config.yaml || fail "the refused trainer rewrote config.yaml"
kill -0 $pid 2>/dev/null || fail "the first trainer died"

kill -INT $pid
rc=0; wait $pid || rc=$?
[ "$rc" -eq 0 ] || { tail -3 live.err; fail "SIGINT should exit 0, got $rc"; }
grep -q "stopping at step" live.err || fail "no 'stopping at step' message after SIGINT"
step=$(sed -n 's/.*stopping at step \([0-9]*\).*/\1/p' live.err)
[ -d "runs/live/checkpoints/step_$step" ] || fail "no checkpoint at the step SIGINT stopped ($step)"
grep -q "train.log" <(ls runs/live) || fail "no train.log in the run directory"
grep -q "stopping at step $step" runs/live/train.log || fail "train.log lacks the console lines"
"$PY" - "$step" <<'PY' || fail "state.json of the SIGINT checkpoint"
import json, sys
step = int(sys.argv[1])
s = json.load(open(f"runs/live/checkpoints/step_{step}/state.json"))
assert s["train"]["step"] == step and set(s) >= {"train", "loader", "rng"}, s
PY
# The lock went with the process: the run resumes from that step.
"$EMBER" train --resume --run-dir runs/live --set train.steps=$((step + 3)) --set optim.warmup_steps=0 2>resumed.err >/dev/null \
  || { cat resumed.err; fail "resume after SIGINT"; }
grep -q "resumed from .*step_$step at step $step" resumed.err || { cat resumed.err; fail "did not resume at step $step"; }
[ -d "runs/live/checkpoints/step_$((step + 3))" ] || fail "the resumed run did not finish"
echo "a live run is locked; SIGINT checkpoints at step $step and the run resumes there"
