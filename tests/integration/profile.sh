# ember train --profile: a Chrome trace and a summary by category in <run>/profile/, and a training
# step that never waits on a value from the device (no host synchronisation outside log steps).
source "$(dirname "$0")/lib_common.sh"
mkdir -p data
make_synthetic data 64 40000 4000 >/dev/null
write_tiny_config t.yaml data

"$EMBER" train -c t.yaml --set train.steps=6 --set optim.warmup_steps=2 --set log.every=100 --set log.name=quiet --profile 3:4 >out.txt 2>err.txt \
  || { cat err.txt >&2; fail "profiled run failed"; }
grep -q "profile of steps 3-4: .*trace.json" err.txt && grep -q "  2 step(s), .* 0.0 host syncs" err.txt || { cat err.txt >&2; fail "no profile table in the log"; }
[ -s runs/quiet/profile/trace.json ] || fail "no trace.json"
"$PY" - <<'PY' || fail "profile summary or trace wrong"
import json
trace = json.load(open("runs/quiet/profile/trace.json"))
names = {e.get("name") for e in trace["traceEvents"]}
assert "ember::loss_head" in names and "ember::optimizer" in names, "the step's scopes are not in the trace"
assert any(n and n.startswith("aten::") for n in names), "no ATen op in the trace"
s = json.load(open("runs/quiet/profile/summary.json"))
assert (s["first_step"], s["last_step"], s["steps"]) == (3, 4, 2), s
# No log step inside the window: nothing in a step reads a device value back.
assert s["host_syncs_per_step"] == 0, f"host syncs in a non-log step: {s['host_syncs_per_step']}"
t = s["seconds_per_step"]
for c in ("matmul", "element-wise/norm", "loss head", "optimizer"):
    assert t[c] > 0, f"{c}: {t[c]}"
assert t["communication"] == 0 and t["attention"] >= 0, t
assert s["ops_per_step"] > 10 and s["top_ops"], s
assert 0 < sum(t.values()) <= 2.0 * s["window_seconds_per_step"], (t, s["window_seconds_per_step"])
PY

expect_error "--profile '5:2'" "$EMBER" train -c t.yaml --set log.name=bad --profile 5:2
expect_error "--profile 'x'" "$EMBER" train -c t.yaml --set log.name=bad --profile x
[ ! -e runs/bad ] || fail "a refused --profile left a run directory"
echo "profile: ok"
