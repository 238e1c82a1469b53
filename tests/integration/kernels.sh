# `ember kernels` and the `kernels:` section end to end: the check exits 0 here with every op
# agreeing (fp32 and bf16), caches its table in the user cache and prints it as JSON; a run records
# its section in config.yaml and its choices in its first log lines and its checkpoints; a resume
# with other choices names each op that changed; bad values are refused by name.
source "$(dirname "$0")/lib_common.sh"
export XDG_CACHE_HOME="$SCRATCH/cache"
ops="loss_head norm swiglu rope projections lev"

for precision in fp32 bf16; do
  "$EMBER" kernels --device cpu --precision $precision >table_$precision.txt 2>table_$precision.err ||
    { cat table_$precision.txt table_$precision.err >&2; fail "ember kernels --precision $precision"; }
  for op in $ops; do
    grep -qE "^$op +yes " table_$precision.txt || { cat table_$precision.txt >&2; fail "$op does not agree ($precision)"; }
  done
  grep -q "| $precision$" table_$precision.txt || fail "the table's key does not name $precision"
done
[ "$(ls cache/ember/kernels/*.json | wc -l)" -eq 2 ] || fail "expected one cached table per precision"
"$EMBER" kernels --device cpu --cached --json >cached.json || fail "ember kernels --cached --json"
"$PY" - <<'PY' || fail "the cached table is wrong"
import json
t = json.load(open("cached.json"))
assert t["source"].endswith(".json"), t["source"]
assert [r["op"] for r in t["rows"]] == "loss_head norm swiglu rope projections lev".split(), t["rows"]
assert all(r["agrees"] and r["choice"] in ("fused", "aten") for r in t["rows"]), t["rows"]
PY
expect_error "--device" "$EMBER" kernels --device tpu
expect_error "--precision" "$EMBER" kernels --precision fp16

mkdir -p data
make_synthetic data 64 20000 2000 >/dev/null
write_tiny_config t.yaml data
ARGS=(-c t.yaml --set train.steps=20 --set eval.every=0 --set checkpoint.every=10)
"$EMBER" train "${ARGS[@]}" --set kernels.norm=fused --set kernels.swiglu=aten 2>first.err >/dev/null ||
  { cat first.err >&2; fail "training"; }
grep -q "^kernels:$" runs/tiny/config.yaml || fail "config.yaml has no kernels section"
grep -q "^  norm: fused$" runs/tiny/config.yaml && grep -q "^  swiglu: aten$" runs/tiny/config.yaml &&
  grep -q "^  rope: auto$" runs/tiny/config.yaml || { cat runs/tiny/config.yaml >&2; fail "config.yaml lacks the choices"; }
head -n 10 first.err | grep -qE "kernels: loss_head=(fused|aten) norm=fused swiglu=aten rope=(fused|aten)" ||
  { cat first.err >&2; fail "the first log lines do not give the kernels"; }
"$PY" - <<'PY' || fail "the checkpoint or kernels.json does not record the kernels"
import json
s = json.load(open("runs/tiny/checkpoints/step_20/state.json"))
k = s["train"]["kernels"]
assert k["choices"]["norm"] == "fused" and k["choices"]["swiglu"] == "aten", k
assert "torch" in k["key"], k
t = json.load(open("runs/tiny/kernels.json"))
assert t["key"] == k["key"] and len(t["rows"]) == 6, t
PY

# A resume with other choices: one line naming each op that changed.
"$EMBER" train -c runs/tiny/config.yaml --resume --run-dir runs/tiny --set train.steps=30 --set kernels.norm=aten \
  --set kernels.swiglu=fused 2>resumed.err >/dev/null || { cat resumed.err >&2; fail "resume"; }
[ "$(grep -c "resuming with other kernels" resumed.err)" -eq 1 ] || { cat resumed.err >&2; fail "no one line on the change"; }
grep "resuming with other kernels" resumed.err | grep -q "norm fused -> aten; swiglu aten -> fused" ||
  { cat resumed.err >&2; fail "the line does not name each op"; }
# The same choices again: nothing to say.
"$EMBER" train -c runs/tiny/config.yaml --resume --run-dir runs/tiny --set train.steps=40 2>again.err >/dev/null ||
  { cat again.err >&2; fail "second resume"; }
! grep -q "resuming with other kernels" again.err || { cat again.err >&2; fail "a resume with the same choices warned"; }

expect_error "kernels.norm" "$EMBER" train "${ARGS[@]}" --set kernels.norm=fast --run-dir runs/bad
[ ! -e runs/bad ] || fail "a refused config left runs/bad behind"
echo "kernels: ok"
