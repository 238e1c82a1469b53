# Data parallel over c10d Gloo with `ember launch`: 2 ranks x micro-batch B equal one process with
# 2B (same windows, gradients averaged in buckets), also with gradient accumulation; resume is bit
# for bit at the same world size; SIGTERM to the job checkpoints and exits 0 on every rank; a rank
# killed with -9 fails the job with a message naming it and leaves no process behind; a rank whose
# peer dies fails by itself within distributed.timeout_s; a killed launcher's rank still
# checkpoints; a rank's leftover children do not hold the job; --max-restarts restarts both ranks
# after a kill -9 and ends bit for bit as the uninterrupted run; ranks that resume from different
# checkpoints are refused; bad launcher input is one clear line.
source "$(dirname "$0")/lib_common.sh"
mkdir -p data
make_synthetic data 64 100000 10000 >/dev/null
write_tiny_config base.yaml data
common=(--set train.steps=20 --set optim.warmup_steps=5 --set log.every=1 --set eval.every=0 --set train.threads=1)

"$EMBER" train -c base.yaml "${common[@]}" --set train.micro_batch=8 --run-dir runs/one 2>one.err >/dev/null \
  || { cat one.err; fail "one process"; }
"$EMBER" launch -n 2 -- ember train -c base.yaml "${common[@]}" --set train.micro_batch=4 \
  --set distributed.bucket_mb=0.05 --run-dir runs/two >two.out 2>two.err || { cat two.err; fail "2 ranks"; }
"$EMBER" launch -n 2 -- ember train -c base.yaml "${common[@]}" --set train.micro_batch=2 --set train.grad_accum=2 \
  --run-dir runs/two_accum >/dev/null 2>accum.err || { cat accum.err; fail "2 ranks with accumulation"; }
grep -q "\[rank 0\] .*distributed: 2 ranks (2 per node) over gloo from torchrun | global batch 4 x 1 x 2" two.err \
  || { cat two.err; fail "rank 0 announces world, backend and global batch, prefixed by the launcher"; }
grep -q "gradient buckets of <= 0.05 MB" two.err || fail "several buckets announced"
[ "$(grep -c 'run directory' two.out)" = 1 ] || fail "only rank 0 reports"

"$PY" "$HERE/same_training.py" 20 runs/one runs/two runs/two_accum || fail "data parallel differs from one process"

# Resume at the same world size: bit for bit.
"$EMBER" launch -n 2 -- ember train -c base.yaml "${common[@]}" --set train.micro_batch=4 --run-dir runs/split \
  --stop-after 8 >/dev/null 2>split.err || { cat split.err; fail "first half"; }
"$EMBER" launch -n 2 -- ember train -c base.yaml "${common[@]}" --set train.micro_batch=4 --run-dir runs/split \
  --resume >/dev/null 2>resume.err || { cat resume.err; fail "resume"; }
"$PY" - <<'PY' || fail "2-rank resume is not bit-identical"
import numpy as np
from safetensors.numpy import load_file
a = load_file("runs/two/checkpoints/step_20/model.safetensors")
b = load_file("runs/split/checkpoints/step_20/model.safetensors")
assert a.keys() == b.keys() and all(a[n].dtype == b[n].dtype and np.array_equal(a[n], b[n]) for n in a)
PY

# Two "nodes" on loopback: one launcher per node (--nnodes 2 --node-rank R --master), and the same
# job from Slurm's variables alone (two tasks on two nodes, the first host is the master); both
# are the same 2-rank training as one node's, bit for bit.
port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
for node in 0 1; do
  "$EMBER" launch -n 1 --nnodes 2 --node-rank $node --master 127.0.0.1:$port -- ember train -c base.yaml \
    "${common[@]}" --set train.micro_batch=4 --set distributed.bucket_mb=0.05 --run-dir runs/nodes \
    >/dev/null 2>node$node.err &
  node_pid[$node]=$!
done
wait ${node_pid[0]} || { cat node0.err; fail "node 0 of a 2-node launch"; }
wait ${node_pid[1]} || { cat node1.err; fail "node 1 of a 2-node launch"; }
grep -q "\[rank 0\] .*distributed: 2 ranks (1 per node) over gloo from torchrun" node0.err \
  || { cat node0.err; fail "2-node launch announces 1 rank per node"; }
# Slurm's master port is 20000 + SLURM_JOB_ID % 10000: pick a job id whose port is free.
slurm_job=$("$PY" -c '
import random, socket
while True:
    job = random.randrange(10000)
    try:
        socket.create_server(("127.0.0.1", 20000 + job)).close(); print(job); break
    except OSError: pass')
for rank in 0 1; do
  SLURM_PROCID=$rank SLURM_NTASKS=2 SLURM_LOCALID=0 SLURM_NTASKS_PER_NODE="1(x2)" SLURM_JOB_ID=$slurm_job \
    SLURM_JOB_NODELIST="localhost,node2" "$EMBER" train -c base.yaml "${common[@]}" --set train.micro_batch=4 \
    --set distributed.bucket_mb=0.05 --run-dir runs/slurm >/dev/null 2>slurm$rank.err &
  task_pid[$rank]=$!
done
wait ${task_pid[0]} || { cat slurm0.err; fail "Slurm task 0"; }
wait ${task_pid[1]} || { cat slurm1.err; fail "Slurm task 1"; }
grep -q "distributed: 2 ranks (1 per node) over gloo from slurm" slurm0.err || { cat slurm0.err; fail "Slurm announce"; }
"$PY" - <<'PY' || fail "a 2-node job differs from the same job on one node"
import numpy as np
from safetensors.numpy import load_file
a = load_file("runs/two/checkpoints/step_20/model.safetensors")
for run in ("nodes", "slurm"):
    b = load_file(f"runs/{run}/checkpoints/step_20/model.safetensors")
    assert a.keys() == b.keys() and all(a[n].dtype == b[n].dtype and np.array_equal(a[n], b[n]) for n in a), run
PY

# ZeRO-1: AdamW state sharded by parameter owner; the same training as replicated state, bit for
# bit; one optimizer shard per rank in the checkpoint; resumable at the same and at another world.
"$EMBER" launch -n 2 -- ember train -c base.yaml "${common[@]}" --set train.micro_batch=4 --set distributed.zero=1 \
  --run-dir runs/zero --stop-after 8 >/dev/null 2>zero.err || { cat zero.err; fail "ZeRO-1 first half"; }
grep -q "AdamW state .* (ZeRO-1: this rank's shard of 2)" zero.err || { cat zero.err; fail "ZeRO-1 memory line"; }
ls runs/zero/checkpoints/step_8/optim_shard_0.safetensors runs/zero/checkpoints/step_8/optim_shard_1.safetensors \
  >/dev/null || fail "one optimizer shard per rank"
[ ! -e runs/zero/checkpoints/step_8/optim.safetensors ] || fail "ZeRO-1 writes no whole optimizer file"
grep -q "optim_shard_1.safetensors" runs/zero/checkpoints/step_8/SHA256SUMS || fail "shards listed in SHA256SUMS"
cp -r runs/zero runs/zero_one_rank
"$EMBER" launch -n 2 -- ember train -c base.yaml "${common[@]}" --set train.micro_batch=4 --set distributed.zero=1 \
  --run-dir runs/zero --resume >/dev/null 2>zero2.err || { cat zero2.err; fail "ZeRO-1 resume"; }
"$EMBER" train -c base.yaml "${common[@]}" --set train.micro_batch=8 --run-dir runs/zero_one_rank --resume \
  >/dev/null 2>zero1.err || { cat zero1.err; fail "a ZeRO-1 checkpoint resumed by one process"; }
grep -q "resuming a checkpoint of 2 rank(s) with 1" zero1.err || fail "world change announced"
"$PY" - <<'PY' || fail "ZeRO-1 differs from replicated optimizer state"
import numpy as np
from safetensors.numpy import load_file
a = load_file("runs/two/checkpoints/step_20/model.safetensors")
b = load_file("runs/zero/checkpoints/step_20/model.safetensors")
assert a.keys() == b.keys() and all(a[n].dtype == b[n].dtype and np.array_equal(a[n], b[n]) for n in a), \
    "ZeRO-1 + resume must equal the replicated run bit for bit"
c = load_file("runs/zero_one_rank/checkpoints/step_20/model.safetensors")
assert a.keys() == c.keys() and all(a[n].dtype == c[n].dtype and a[n].shape == c[n].shape for n in a)
scale = max(float(np.abs(t).max()) for t in a.values())
diff = max(float(np.abs(a[n] - c[n]).max()) for n in a)
assert diff < 1e-4 * scale, (diff, scale)
PY
expect_error "distributed.zero" "$EMBER" train -c base.yaml --set distributed.zero=2

# SIGTERM to the launcher (Slurm preemption): each rank finishes its step, one checkpoint, exit 0.
"$EMBER" launch -n 2 -- ember train -c base.yaml "${common[@]}" --set train.steps=100000 --set log.every=1 \
  --run-dir runs/term >term.out 2>term.err &
launcher=$!
for _ in $(seq 600); do grep -q "step .*10/" term.err 2>/dev/null && break; sleep 0.1; done
kill -TERM $launcher
wait $launcher || { cat term.err; fail "SIGTERM: the job must exit 0"; }
grep -q "forwarding signal 15" term.err || fail "the launcher forwards SIGTERM"
grep -q "stopping at step" term.err || { cat term.err; fail "rank 0 stops for preemption"; }
ls runs/term/checkpoints | grep -q step_ || fail "no checkpoint after SIGTERM"

# Three jobs lose rank 1 to kill -9 side by side, so that the 3.5 s each rank 0 spends watching the
# heartbeats before it names its dead peer pass once, not three times in a row; the checks that end
# by themselves (a left-behind child, diverging resumes, bad input, an orphaned rank) run meanwhile.
# Each job is still checked as it was alone (the killed job's ranks as soon as its launcher exits).
# kill -9 of one rank: the launcher names it, stops the other, exits non-zero, leaves nothing.
# --grace 15: rank 0 names its dead peer after 3.5 s of watching the heartbeats, which took over
# the 5 s this test gave once while a build shared the 2 cores.
"$EMBER" launch -n 2 --grace 15 -- ember train -c base.yaml "${common[@]}" --set train.steps=100000 \
  --set distributed.timeout_s=20 --run-dir runs/kill9 >kill.out 2>kill.err &
kill9_launcher=$!
# --max-restarts on one node: kill -9 of rank 1 after the step-5 checkpoint restarts both ranks with
# --resume, the restart logged with its cause, and the run ends as the uninterrupted one, bit for bit.
# (Two hosts, through the launchers' store: tests/integration/multinode.sh.)
"$EMBER" launch -n 2 --max-restarts 1 --grace 10 -- ember train -c base.yaml "${common[@]}" --set train.micro_batch=4 \
  --set checkpoint.every=5 --run-dir runs/restart >/dev/null 2>restart.err &
restart_launcher=$!
# Without a launcher: rank 0 notices its dead peer by itself, within distributed.timeout_s.
port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
run_rank() { RANK=$1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port exec "$EMBER" train -c base.yaml "${common[@]}" \
  --set train.steps=100000 --set distributed.timeout_s=10 --run-dir runs/alone; }
run_rank 0 >/dev/null 2>alone0.err &
alone_r0=$!
run_rank 1 >/dev/null 2>alone1.err &
alone_r1=$!

# The restart job first: it trains 20 steps only, and its rank 1 must die before it ends.
rank1=""
for _ in $(seq 600); do
  for pid in $(pgrep -P "$restart_launcher"); do
    tr '\0' '\n' </proc/$pid/environ 2>/dev/null | grep -qx "RANK=1" && rank1=$pid
  done
  [ -n "$rank1" ] && break
  sleep 0.1
done
[ -n "$rank1" ] || fail "rank 1 of the restart test not found"
for _ in $(seq 1200); do grep -q "step .*6/" restart.err 2>/dev/null && break; sleep 0.05; done
kill -9 "$rank1"

for _ in $(seq 600); do grep -q "step .*5/" kill.err 2>/dev/null && break; sleep 0.1; done
rank1=""
ranks=$(pgrep -P "$kill9_launcher")  # the launcher's children: no other test's (or suite's) processes
for pid in $ranks; do
  tr '\0' '\n' </proc/$pid/environ 2>/dev/null | grep -qx "RANK=1" && rank1=$pid
done
[ -n "$rank1" ] || fail "rank 1 not found"
kill -9 "$rank1"

for _ in $(seq 600); do grep -q "step .*5/" alone0.err 2>/dev/null && break; sleep 0.1; done
kill -9 $alone_r1
alone_killed=$(date +%s)

# Running: neither gone nor a zombie (a process whose parent has not reaped it yet has ended).
running() {
  local stat
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  stat=${stat##*) }
  [ -n "$stat" ] && [ "${stat:0:1}" != Z ]
}
# The killed job's ranks are looked at as soon as its launcher exits, whatever this script does
# meanwhile: gone within 0.5 s of its exit (seen within 0.05 s), looked at every 0.05 s, not slept
# through.
(
  while running "$kill9_launcher"; do sleep 0.05; done
  for _ in $(seq 9); do
    left=""; for pid in $ranks; do kill -0 "$pid" 2>/dev/null && left=$pid; done
    [ -z "$left" ] && break; sleep 0.05
  done
  for pid in $ranks; do ! kill -0 "$pid" 2>/dev/null || fail "rank process $pid left behind"; done
) &
kill9_watch=$!

# While the three rank 0s watch the heartbeats: the checks that end by themselves.
# A rank's exit ends its part of the job: what it left running (holding the output pipe) is
# stopped, and the launcher does not wait for it.
start=$(date +%s)
nap="37.$$"  # a sleep no other process runs
"$EMBER" launch -n 1 -- sh -c "sleep $nap & echo started" >left.out 2>&1 || { cat left.out; fail "left-behind child"; }
[ $(( $(date +%s) - start )) -le 10 ] || fail "the launcher waited for a process its rank left behind"
grep -q "\[rank 0\] started" left.out || fail "the rank's output is lost"
for _ in $(seq 10); do pgrep -f "sleep $nap" >/dev/null || break; sleep 0.05; done  # within 0.5 s
! pgrep -f "sleep $nap" >/dev/null || fail "the rank's child was left running"

# Ranks that resume from different checkpoints (a run directory on node-local disks) are refused.
port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p runs/local_empty
resume_rank() { RANK=$1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$EMBER" train -c base.yaml \
  "${common[@]}" --set train.micro_batch=4 --set distributed.timeout_s=30 --run-dir "$2" --resume; }
resume_rank 0 runs/split >/dev/null 2>diverge0.err &
diverge_r0=$!
resume_rank 1 runs/local_empty >/dev/null 2>diverge1.err && fail "rank 1 resumed from nothing beside rank 0's step 20"
wait $diverge_r0 && fail "rank 0 trained with a rank that resumed elsewhere"
grep -q "rank 0 starts at step 20 but rank 1 at step 0" diverge0.err || { cat diverge0.err; fail "resume mismatch message"; }

# Bad input.
RANK=0 WORLD_SIZE=2 "$EMBER" train -c base.yaml "${common[@]}" --run-dir runs/bad 2>env.err && fail "missing MASTER_*"
grep -q "torchrun environment without MASTER_ADDR, MASTER_PORT" env.err || { cat env.err; fail "env error"; }
[ ! -e runs/bad ] || fail "a refused run must not create its directory"
expect_error "no command to run" "$EMBER" launch -n 2
expect_error "expected HOST:PORT" "$EMBER" launch -n 2 --master nohost -- true
"$EMBER" launch -n 2 -- /nonexistent/program 2>noexec.err && fail "a command that cannot run"
grep -q "cannot run '/nonexistent/program'" noexec.err || { cat noexec.err; fail "exec error"; }

# The launcher killed with -9: its rank hears SIGTERM (PDEATHSIG), and although nobody reads its
# output any more it finishes the step and checkpoints (SIGPIPE used to kill it first).
"$EMBER" launch -n 1 -- ember train -c base.yaml "${common[@]}" --set train.steps=100000 \
  --run-dir runs/orphan >/dev/null 2>orphan.err &
launcher=$!
for _ in $(seq 600); do grep -q "step .*5/" orphan.err 2>/dev/null && break; sleep 0.1; done
rank=$(pgrep -P "$launcher" | head -1)  # the launcher's own child: no other test's process
[ -n "$rank" ] || fail "the orphan test's rank not found"
kill -9 $launcher
# Ended means exited: the orphan's parent is init, which here reaps it up to ~1.5 s later, and
# until then kill -0 still finds the zombie.
for _ in $(seq 300); do running "$rank" || break; sleep 0.1; done
! running "$rank" || fail "the rank of a killed launcher is still running"
ls runs/orphan/checkpoints | grep -q step_ || { cat runs/orphan/train.log; fail "the orphaned rank wrote no checkpoint"; }
grep -q "stopping at step" runs/orphan/train.log || fail "the orphaned rank did not stop for preemption"

# The three jobs that lost rank 1.
if wait $kill9_launcher; then fail "a killed rank must fail the job"; fi
grep -q "rank 1 was killed by signal 9; stopping the other ranks" kill.err || { cat kill.err; fail "launcher message"; }
grep -q "\[rank 0\] ember: error: distributed: .* failed on rank 0: rank 1 stopped beating" kill.err \
  || { cat kill.err; fail "rank 0 names the dead rank"; }
wait $kill9_watch || fail "the killed job left a rank behind"

if wait $alone_r0; then fail "rank 0 must fail when rank 1 dies"; fi
[ $(( $(date +%s) - alone_killed )) -le 30 ] || fail "rank 0 took too long to notice"  # an upper bound: waited last
grep -q "ember: error: distributed: .* failed on rank 0: rank 1 stopped beating" alone0.err \
  || { tail -3 alone0.err; fail "rank 0 names the dead rank"; }

wait $restart_launcher || { cat restart.err; fail "a restarted job must end well"; }
grep -q "ember launch: restart 1 of 1 after node 0: rank 1 was killed by signal 9" restart.err \
  || { cat restart.err; fail "the restart is logged with its cause"; }
cmp -s runs/two/checkpoints/step_20/model.safetensors runs/restart/checkpoints/step_20/model.safetensors \
  || fail "a restarted run differs from the uninterrupted one"

echo "data parallel over Gloo: equal to one process, resumable, preemptible, fails loudly"
