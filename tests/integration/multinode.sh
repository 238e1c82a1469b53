# Two hosts as network namespaces joined by a veth pair (10.77.0.1 and 10.77.0.2, only inside the
# namespaces this test makes; removed on every exit), one `ember launch --nnodes 2` on each, with
# no GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME and each host's name resolving to loopback (its
# /etc/hosts, as Debian writes it): (a) the job trains to the same weights as one host's 2 ranks,
# sha256-equal; (b) a cut link (`ip link set ... down`) ends both launchers non-zero within 40 s,
# each rank with one line naming what it lost, and leaves no process in either namespace; (c) with
# --max-restarts 1, kill -9 of the rank on host 1 mid-run restarts every node's ranks from the last
# checkpoint and the job ends with the uninterrupted run's weights, sha256-equal.
# Skips (ctest's code 77, tests/CMakeLists.txt) when it cannot make network namespaces.
source "$(dirname "$0")/lib_common.sh"
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "making network namespaces needs root (uid $(id -u))"
command -v ip >/dev/null || skip "no 'ip' command (iproute2)"

hosts=("emb$$a" "emb$$b")  # unique per test process: parallel runs do not collide
addr=(10.77.0.1 10.77.0.2)
remove_hosts() {
  for ns in "${hosts[@]}"; do
    if ip netns list 2>/dev/null | grep -qw "$ns"; then
      for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
      ip netns del "$ns" 2>/dev/null || true
    fi
    rm -rf "/etc/netns/$ns"
  done
}
trap 'cleanup_jobs; remove_hosts' EXIT
trap 'exit 130' INT TERM
make_hosts() {
  ip netns add "${hosts[0]}" && ip netns add "${hosts[1]}" \
    && ip -n "${hosts[0]}" link add veth0 type veth peer name veth1 netns "${hosts[1]}" || return 1
  for i in 0 1; do
    ip -n "${hosts[$i]}" addr add "${addr[$i]}/24" dev "veth$i" && ip -n "${hosts[$i]}" link set "veth$i" up \
      && ip -n "${hosts[$i]}" link set lo up || return 1
    # `ip netns exec` mounts /etc/netns/NS/hosts over /etc/hosts: there the host's name is loopback.
    mkdir -p "/etc/netns/${hosts[$i]}" || return 1
    printf '127.0.0.1 localhost\n127.0.1.1 %s\n' "$(hostname)" >"/etc/netns/${hosts[$i]}/hosts" || return 1
  done
}
make_hosts 2>netns.err || skip "cannot make two hosts as network namespaces: $(tail -1 netns.err)"
[ "$(ip netns exec "${hosts[1]}" getent hosts "$(hostname)" | cut -d' ' -f1)" = 127.0.1.1 ] \
  || fail "the host name should resolve to loopback inside the namespaces"

mkdir -p data
make_synthetic data 64 100000 10000 >/dev/null
write_tiny_config base.yaml data
common=(--set train.micro_batch=4 --set optim.warmup_steps=5 --set log.every=1 --set eval.every=0
  --set train.threads=1 --set checkpoint.every=10 --set distributed.timeout_s=60)
launch_opts=()
on_host() {  # on_host I ARGS...: ember launch on host I (node rank I) of a 2-node job mastered by host 0
  local i=$1; shift
  ip netns exec "${hosts[$i]}" env -u GLOO_SOCKET_IFNAME -u NCCL_SOCKET_IFNAME "$EMBER" launch -n 1 --nnodes 2 \
    --node-rank "$i" --master "${addr[0]}:29500" "${launch_opts[@]}" -- ember train -c base.yaml "${common[@]}" "$@"
}

# (a) Two hosts equal one host's two ranks, bit for bit.
start=$(date +%s)
env -u GLOO_SOCKET_IFNAME "$EMBER" launch -n 2 -- ember train -c base.yaml "${common[@]}" --set train.steps=40 \
  --run-dir runs/one_host >/dev/null 2>one_host.err || { cat one_host.err; fail "one host, 2 ranks"; }
for i in 0 1; do
  on_host $i --set train.steps=40 --run-dir runs/two_hosts >/dev/null 2>host$i.err &
  pid[$i]=$!
done
wait ${pid[0]} || { cat host0.err host1.err; fail "host 0 of a 2-host job"; }
wait ${pid[1]} || { cat host1.err; fail "host 1 of a 2-host job"; }
grep -q "distributed: rank 0 ${addr[0]} on host .*, rank 1 ${addr[1]} on host .* (the route to the master" host0.err \
  || { cat host0.err; fail "rank 0 names each rank's address, chosen by the route to the master"; }
sha() { sha256sum "runs/$1/checkpoints/step_40/model.safetensors" | cut -d' ' -f1; }
[ "$(sha one_host)" = "$(sha two_hosts)" ] || fail "two hosts' weights differ from one host's"
echo "two hosts = one host: $(sha two_hosts) ($(( $(date +%s) - start )) s)"

# (b) A cut link: each side ends by itself within its heartbeat timeout (5 s here, 30 by default: the
# same watch, a sixth of the suite's wait; 5 s is still five missed beats of a 1 s period, far above a
# healthy peer's gap on 2 busy cores) and a margin, naming what it lost.
for i in 0 1; do
  on_host $i --set train.steps=100000 --set distributed.heartbeat_timeout_s=5 --run-dir runs/cut >/dev/null 2>cut$i.err &
  pid[$i]=$!
done
for _ in $(seq 600); do grep -q "step .*10/" cut0.err 2>/dev/null && break; sleep 0.1; done
grep -q "step .*10/" cut0.err || { cat cut0.err cut1.err; fail "the job to cut did not start"; }
ip -n "${hosts[1]}" link set veth1 down  # host 0's end loses its carrier, keeps its address
cut=$(date +%s)
for i in 0 1; do
  if wait ${pid[$i]}; then fail "host $i's launcher exited 0 after its link was cut"; fi
  took[$i]=$(( $(date +%s) - cut ))
done
for i in 0 1; do
  [ "${took[$i]}" -le 40 ] || fail "host $i took ${took[$i]} s to end after the cut"
  [ -z "$(ip netns pids "${hosts[$i]}")" ] || fail "processes left on host $i: $(ip netns pids "${hosts[$i]}")"
done
grep -q "\[rank 0\] ember: error: distributed: rank 0 lost rank 1 at ${addr[1]} on host .*: no heartbeat for 5 s" cut0.err \
  || { cat cut0.err; fail "rank 0 names the rank and host it lost"; }
grep -q "\[rank 1\] ember: error: distributed: rank 1 lost the store at ${addr[0]}:29500 (rank 0 at ${addr[0]}" cut1.err \
  || { cat cut1.err; fail "rank 1 says it lost the store on the master's host"; }
echo "cut link: host 0 ended after ${took[0]} s, host 1 after ${took[1]} s"

# (c) --max-restarts 1: kill -9 of rank 1 (host 1) after the step-10 checkpoint; both launchers meet
# again, restart their ranks with --resume, and the job ends with the uninterrupted run's weights.
ip -n "${hosts[1]}" link set veth1 up
launch_opts=(--max-restarts 1 --grace 10)
for i in 0 1; do
  on_host $i --set train.steps=40 --run-dir runs/restart >/dev/null 2>restart$i.err &
  pid[$i]=$!
done
rank1=""  # found first, killed as soon as rank 0 has passed step 15 (the run takes ~1 s more)
for _ in $(seq 600); do
  for p in $(ip netns pids "${hosts[1]}"); do
    tr '\0' '\n' </proc/$p/environ 2>/dev/null | grep -qx "RANK=1" && rank1=$p
  done
  [ -n "$rank1" ] && break
  sleep 0.1
done
[ -n "$rank1" ] || { cat restart0.err restart1.err; fail "rank 1 not found on host 1"; }
for _ in $(seq 1200); do grep -q "step .*15/" restart0.err 2>/dev/null && break; sleep 0.05; done
kill -9 "$rank1"
wait ${pid[0]} || { cat restart0.err; fail "host 0 of a restarted job"; }
wait ${pid[1]} || { cat restart1.err; fail "host 1 of a restarted job"; }
for i in 0 1; do
  grep -q "ember launch: restart 1 of 1 after node 1: rank 1 was killed by signal 9" restart$i.err \
    || { cat restart$i.err; fail "host $i logs the restart with its cause"; }
done
grep -q "\[rank 0\] .*resumed from .*/step_[1-3]0 at step [1-3]0" restart0.err \
  || { cat restart0.err; fail "the restart resumes from the last checkpoint"; }
[ "$(sha restart)" = "$(sha one_host)" ] || fail "a restarted job's weights differ from an uninterrupted run's"
echo "restart after kill -9: same weights as the uninterrupted run"
echo "two hosts: one host's weights without *_SOCKET_IFNAME; a cut link ends both sides, each naming what it lost;"
echo "a rank killed with -9 restarts every node's ranks, ending bit-identical"
