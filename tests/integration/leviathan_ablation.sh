# scripts/leviathan_ablation.sh end to end on a synthetic corpus, a few steps per kind: every
# kind trains and is evaluated, the summary holds one finite row per kind, a second call keeps
# the finished runs, bad arguments fail before anything is written.
source "$(dirname "$0")/lib_common.sh"
ROOT="$(cd "$HERE/../.." && pwd)"
export EMBER_BUILD="$(cd "$(dirname "$EMBER")/.." && pwd)"
ablation() { bash "$ROOT/scripts/leviathan_ablation.sh" --no-setup "$@"; }
mkdir -p data
make_synthetic data 256 60000 8000 >/dev/null
short=(--set train.steps=6 --set optim.warmup_steps=2 --set train.micro_batch=2 --set train.seq_len=32 --set eval.every=6
       --set eval.batches=2 --set checkpoint.every=3 --set log.every=3)

ablation --out abl --kinds "tied albert lev" --data data -- "${short[@]}" >run1.out 2>run1.err \
  || { tail -20 run1.err >&2; fail "ablation failed"; }
grep -q "| lev |" run1.out && grep -q "| albert |" run1.out || fail "table lacks rows: $(cat run1.out)"
"$PY" - <<'PY' || fail "summary.json is wrong"
import json, math
rows = json.load(open("abl/summary.json"))
assert [r["kind"] for r in rows] == ["tied", "albert", "lev"], rows
for r in rows:
    assert r["steps"] == 6 and math.isfinite(r["val_loss"]) and r["val_loss"] > 0, r
    assert r["val_tokens"] > 0 and r["tokens_per_s"] > 0, r
assert rows[2]["embedding_params"] != rows[0]["embedding_params"]
PY

# A second call keeps finished runs (nothing retrained) and prints the same table.
ablation --out abl --kinds "tied albert lev" --data data -- "${short[@]}" >run2.out 2>run2.err \
  || fail "second call failed"
[ "$(grep -c ': done' run2.out)" -eq 3 ] || fail "finished runs were not kept: $(cat run2.out)"
[ "$(grep -c '"kind":"train"' abl/lev/metrics.jsonl)" -eq 2 ] || fail "lev was retrained"

# Bad arguments: a clear message, exit 2, no output directory.
rc=0; ablation --out "$SCRATCH/bad" --kinds "lev dense" --data data >bad.out 2>bad.err || rc=$?
[ "$rc" -eq 2 ] && grep -q "no configs/leviathan/dense.yaml" bad.err || fail "unknown kind accepted (rc $rc)"
rc=0; ablation --out "$SCRATCH/bad" --data "$SCRATCH/nowhere" >bad.out 2>bad.err || rc=$?
[ "$rc" -eq 2 ] && grep -q "no $SCRATCH/nowhere/train_\*.bin" bad.err || fail "missing data accepted (rc $rc)"
rc=0; ablation --frobnicate >bad.out 2>bad.err || rc=$?
[ "$rc" -eq 2 ] && grep -q "unknown argument '--frobnicate'" bad.err || fail "unknown option accepted"
[ ! -e "$SCRATCH/bad" ] || fail "a failed call left $SCRATCH/bad behind"
echo "ablation script: 3 kinds trained, evaluated, summarised and kept on a second call"
