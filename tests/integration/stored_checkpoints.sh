# Checkpoints written before the optimizer became a checkpoint component (tests/checkpoints: step 4
# of an 8-step run by one process, by 2 ranks, and by 2 ranks with ZeRO-1's optimizer shards) resume
# with today's trainer at 1 and 2 ranks, ZeRO-1 on and off. Each resume at its own world size ends
# bit-identical to one that stops at step 6 and resumes again; the replicated and the ZeRO-1
# checkpoint, which hold the same state, end the same; ZeRO-1 writes its shards as before.
source "$(dirname "$0")/lib_common.sh"
STORED="$EMBER_SOURCE_DIR/tests/checkpoints"
mkdir -p data runs
make_synthetic data 64 20000 4000 >/dev/null  # the data set the stored runs trained on
export EMBER_DATA_DIR="$PWD/data"              # the runs recorded another directory (run/run_data.h)

resume() {  # run ranks zero [--stop-after N]: resume runs/<run> with 1 or 2 ranks
  local run=$1 ranks=$2 zero=$3
  shift 3
  local args=(train --resume --run-dir "runs/$run" --set train.threads=1 --set distributed.zero="$zero" "$@")
  if [ "$ranks" = 1 ]; then
    "$EMBER" "${args[@]}" --set train.micro_batch=4 >>"$run.out" 2>>"$run.err"
  else
    "$EMBER" launch -n 2 -- ember "${args[@]}" --set train.micro_batch=2 >>"$run.out" 2>>"$run.err"
  fi || { cat "$run.err" >&2; fail "resuming $run with $ranks rank(s), ZeRO $zero"; }
  grep -q "resumed from .*step_4 at step 4\|resumed from .*step_6 at step 6" "$run.err" || fail "$run did not resume"
}

same() {  # run_a run_b: their step-8 checkpoints hold the same model and optimizer state, bit for bit
  "$PY" - "runs/$1/checkpoints/step_8" "runs/$2/checkpoints/step_8" <<'PY' || fail "$1 and $2 differ at step 8"
import glob, sys, numpy as np
from safetensors.numpy import load_file
def state(d):
    out = dict(load_file(f"{d}/model.safetensors"))
    for f in glob.glob(f"{d}/optim*.safetensors"):
        out.update({"optim/" + k: v for k, v in load_file(f).items()})
    return out
a, b = state(sys.argv[1]), state(sys.argv[2])
assert a.keys() == b.keys(), sorted(a.keys() ^ b.keys())[:5]
diff = [k for k in a if not (a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]))]
assert not diff, diff[:5]
print(sys.argv[1], "==", sys.argv[2], len(a), "tensors")
PY
}

for case in "one 1 0" "two 2 0" "zero 2 1"; do
  set -- $case
  cp -r "$STORED/$1" "runs/$1"
  cp -r "$STORED/$1" "runs/$1_split"
  resume "$1" "$2" "$3"
  resume "$1_split" "$2" "$3" --stop-after 6
  resume "$1_split" "$2" "$3"
  same "$1" "$1_split"
done
same two zero
ls runs/zero/checkpoints/step_8/optim_shard_0.safetensors runs/zero/checkpoints/step_8/optim_shard_1.safetensors \
  >/dev/null || fail "ZeRO-1 wrote no optimizer shard per rank"
[ ! -e runs/zero/checkpoints/step_8/optim.safetensors ] || fail "ZeRO-1 wrote a whole optimizer file"
[ ! -e runs/two/checkpoints/step_8/optim_shard_0.safetensors ] || fail "a replicated run wrote shards"

# Across world sizes: ZeRO-1 shards into one process, and one process's file into ZeRO-1 ranks.
cp -r "$STORED/zero" runs/zero_to_one
resume zero_to_one 1 0
grep -q "resuming a checkpoint of 2 rank(s) with 1" zero_to_one.err || fail "world change not announced"
cp -r "$STORED/one" runs/one_to_zero
resume one_to_zero 2 1
ls runs/one_to_zero/checkpoints/step_8/optim_shard_1.safetensors >/dev/null || fail "one_to_zero wrote no shards"

# ZeRO-1 ranks whose run directories differ (node-local disks): rank 1 cannot put its shard where
# rank 0 seals the checkpoint, so both stop with the reason and no checkpoint is sealed.
port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
zero_rank() { RANK=$1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$EMBER" train -c "$STORED/config.yaml" \
  --set 'data.train=[data/train_*.bin]' --set 'data.val=[data/val_*.bin]' --set train.micro_batch=2 \
  --set distributed.zero=1 --set distributed.timeout_s=60 --set train.threads=1 --run-dir "$2"; }
zero_rank 0 runs/local0 >/dev/null 2>local0.err &
r0=$!
zero_rank 1 runs/local1 >/dev/null 2>local1.err && fail "rank 1 wrote a shard into a run directory rank 0 does not see"
wait $r0 && fail "rank 0 sealed a checkpoint without rank 1's shard"
grep -q "writing the checkpoint's shards: another rank failed" local0.err || { cat local0.err; fail "rank 0's reason"; }
grep -q "rank 1 does not see the staging directory .*shared filesystem" local1.err || { cat local1.err; fail "rank 1's reason"; }
[ ! -d runs/local0/checkpoints/step_4 ] || fail "a checkpoint without every shard was sealed"
echo "stored checkpoints resume at 1 and 2 ranks, ZeRO-1 on and off"
