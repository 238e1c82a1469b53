# A run killed with SIGKILL, and one preempted with SIGTERM, then resumed, end with bit-identical
# parameters and the same loss curve as an uninterrupted run; checkpoint.final=false skips only the
# checkpoint at the end. Batches read ahead by a thread (the default) and read on demand
# (kernels.prefetch_batches = 0) train the same model; a bad read-ahead depth is refused by name.
source "$(dirname "$0")/lib_common.sh"
mkdir -p data
make_synthetic data 64 200000 20000 >/dev/null
write_tiny_config base.yaml data
# 120 steps of ~19 ms (d_model 128, 64 tokens a row): the kill after step 40's checkpoint lands with
# 80 steps (~1.5 s alone, ~3 s beside another test) to spare, against a 10 ms poll; 200 steps had
# spent 6 s more of the suite on steps after it.
STEPS=120
ARGS=(-c base.yaml --set train.steps=$STEPS --set model.d_model=128 --set train.seq_len=64)

curve() {  # the deterministic columns of metrics.jsonl
  "$PY" -c "
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(r['kind'], r['step'], r.get('loss'), r.get('lr'), r.get('grad_norm'), r.get('val_loss'))
" "$1"
}

wait_for_checkpoint() {  # run_dir step pid
  for _ in $(seq 1 3000); do
    [ -f "$1/checkpoints/latest" ] && [ -d "$1/checkpoints/step_$2" ] && return 0
    kill -0 "$3" 2>/dev/null || fail "run ended before step $2 was checkpointed"
    sleep 0.01
  done
  fail "timed out waiting for $1 step $2"
}

"$EMBER" train "${ARGS[@]}" --run-dir runs/straight 2>straight.err >/dev/null || { cat straight.err; fail "straight run"; }

# SIGKILL: no chance to clean up. Resume continues from the newest complete checkpoint.
"$EMBER" train "${ARGS[@]}" --run-dir runs/killed 2>killed.err >/dev/null &
pid=$!
wait_for_checkpoint runs/killed 40 $pid
kill -9 $pid
rc=0; wait $pid || rc=$?
[ "$rc" -eq 137 ] || fail "the run was not killed mid-way (exit $rc); make it longer"
[ ! -d runs/killed/checkpoints/step_$STEPS ] || fail "run finished before the kill"
"$EMBER" train --resume --run-dir runs/killed 2>resumed.err >/dev/null || { cat resumed.err; fail "resume after kill"; }
grep -q "resumed from" resumed.err || fail "resume did not load a checkpoint"

# SIGTERM: the trainer saves a checkpoint at the current step and exits 0.
"$EMBER" train "${ARGS[@]}" --run-dir runs/preempted 2>preempted.err >preempted.out &
pid=$!
wait_for_checkpoint runs/preempted 20 $pid
kill -TERM $pid
rc=0; wait $pid || rc=$?
[ "$rc" -eq 0 ] || { cat preempted.err; fail "SIGTERM should exit 0, got $rc"; }
grep -q "stopped early" preempted.out || fail "preempted run did not say it stopped early"
"$EMBER" train --resume --run-dir runs/preempted 2>>preempted.err >/dev/null || fail "resume after SIGTERM"

"$EMBER" train "${ARGS[@]}" --set kernels.prefetch_batches=0 --run-dir runs/on_demand 2>on_demand.err >/dev/null \
  || { cat on_demand.err; fail "run with batches read on demand"; }
rc=0; "$EMBER" train "${ARGS[@]}" --set kernels.prefetch_batches=two --run-dir runs/bad_depth 2>bad_depth.err >/dev/null || rc=$?
[ "$rc" -ne 0 ] || fail "kernels.prefetch_batches=two was accepted"
grep -q "kernels.prefetch_batches" bad_depth.err || { cat bad_depth.err; fail "the bad depth's error does not name it"; }
[ ! -e runs/bad_depth ] || fail "a refused run left runs/bad_depth behind"

want=$(sha256sum <runs/straight/checkpoints/step_$STEPS/model.safetensors)
for run in killed preempted on_demand; do
  got=$(sha256sum <runs/$run/checkpoints/step_$STEPS/model.safetensors)
  [ "$got" = "$want" ] || fail "$run: final parameters differ from the uninterrupted run"
  cmp <(curve runs/straight/metrics.jsonl) <(curve runs/$run/metrics.jsonl) || fail "$run: loss curve differs"
  cmp runs/straight/checkpoints/step_$STEPS/optim.safetensors runs/$run/checkpoints/step_$STEPS/optim.safetensors \
    || fail "$run: optimizer state differs"
done
echo "resume after SIGKILL and SIGTERM is bit-identical"

# checkpoint.final=false (throughput probes): periodic checkpoints only, none at the end; the final
# evaluation still runs.
"$EMBER" train -c base.yaml --set train.steps=30 --set checkpoint.every=20 --set checkpoint.final=false \
  --run-dir runs/no_final 2>no_final.err >/dev/null || { cat no_final.err; fail "checkpoint.final=false run"; }
[ -d runs/no_final/checkpoints/step_20 ] || fail "checkpoint.final=false dropped the periodic checkpoint"
[ ! -e runs/no_final/checkpoints/step_30 ] || fail "checkpoint.final=false still wrote the final checkpoint"
"$PY" -c "
import json, sys
recs = [json.loads(l) for l in open('runs/no_final/metrics.jsonl')]
assert any(r['kind'] == 'eval' and r['step'] == 30 for r in recs), 'no final evaluation'
assert all('device_peak_allocated_gib' not in r for r in recs), 'a CPU run reported device memory'
" || fail "checkpoint.final=false: metrics"
echo "checkpoint.final=false writes no final checkpoint"

# A resume with another model is refused before anything changes: config.yaml still describes the
# checkpoints (eval keeps working) and the message names the keys that differ. Other changed keys
# are announced, and a train.steps the run has passed says there is nothing to train.
cp runs/no_final/config.yaml no_final.config.before
expect_error "different model config (model.d_model: 64 -> 128" \
  "$EMBER" train -c base.yaml --set model.d_model=128 --set train.steps=40 --run-dir runs/no_final --resume
cmp -s runs/no_final/config.yaml no_final.config.before || fail "a refused resume rewrote config.yaml"
"$EMBER" eval runs/no_final --batches 1 >/dev/null 2>eval_after.err || { cat eval_after.err; fail "eval after a refused resume"; }
"$EMBER" train -c base.yaml --set train.steps=15 --set checkpoint.every=20 --run-dir runs/no_final --resume \
  >/dev/null 2>changed.err || { cat changed.err; fail "resume with another train.steps"; }
grep -q "resuming with a changed train.steps: 30 -> 15" changed.err || { cat changed.err; fail "changed key not announced"; }
grep -q "the run is at step 20 and train.steps = 15: nothing to train" changed.err || fail "nothing-to-train not said"
echo "a refused resume leaves the run as it was; changed keys are announced"
