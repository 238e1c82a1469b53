# ember ladder plan / run / report end to end on a synthetic corpus: two members at three sizes (one
# a parameter target) with two seeds, steps from a fixed token budget; one run trained beforehand is
# skipped (resumable); the report's files against the runs' eval.json, and the same report from its
# ladder_points.csv alone; bad ladders fail naming the key.
source "$(dirname "$0")/lib_common.sh"
mkdir -p data
make_synthetic data 64 60000 6000 >/dev/null
write_tiny_config base.yaml data
cat >l.yaml <<'YAML'
out: lad
configs: [base.yaml]
set: {eval.every: 1000, checkpoint.every: 1000, log.every: 5}
sizes:
  - {d_model: 16, n_layers: 1}
  - {d_model: 32, n_layers: 1}
  - {params: 3.0e4, name: big}
rules: {head_dim: 16, d_ff_ratio: 2, aspect: 32}
tokens: {fixed: 5120}
warmup: 0.2
members:
  - {name: tied, set: {model.embedding.kind: tied}}
  - {name: untied, set: {model.embedding.kind: untied}}
seeds: [1, 2]
baseline: tied
eval_batches: 4
bootstrap: 200
target: 1.0e6
YAML
"$EMBER" ladder plan l.yaml >plan.txt || fail "ladder plan failed"
grep -Eq "^tied_big +48 +2 +3 +96 " plan.txt || { cat plan.txt >&2; fail "the parameter target did not give d_model 48, 2 layers, 3 heads"; }
grep -q "^12 runs (6 entries x 2 seed(s))" plan.txt || { cat plan.txt >&2; fail "plan does not count 12 runs"; }
"$EMBER" ladder plan l.yaml --json >plan.json || fail "ladder plan --json failed"
"$PY" -c 'import json; p = json.load(open("plan.json")); assert len(p) == 6 and all(e["steps"] == 20 for e in p), p' \
  || fail "plan --json: 6 entries of 20 steps (5120 tokens / 256 a step)"
[ ! -e lad ] || fail "plan created the output directory"
"$EMBER" ladder run l.yaml --dry-run >dry.txt || fail "dry run failed"
[ "$(wc -l <dry.txt)" -eq 12 ] || { cat dry.txt >&2; fail "dry run should list 12 runs"; }
grep -q "^\[11\] untied_big_seed2: .*--set model.d_model=48 .*--set train.steps=20 --set optim.warmup_steps=4 --set train.seed=2" dry.txt \
  || { cat dry.txt >&2; fail "run 11's command lacks its shape, steps, warmup or seed"; }
"$EMBER" ladder run l.yaml --member 0 >one.out 2>&1 || { cat one.out >&2; fail "ladder run --member 0"; }
[ -f lad/tied_d16l1_seed1/eval.json ] && [ ! -e lad/ladder.md ] || fail "--member 0 should train one run and write no report"
"$EMBER" ladder run l.yaml >run.out 2>run.err || { cat run.err >&2; fail "ladder run failed"; }
grep -q "== tied_d16l1_seed1: complete, skipped" run.out || fail "the finished run was not skipped"
[ "$(grep -c ': complete$' run.out)" -eq 11 ] || { cat run.out >&2; fail "11 runs should have completed"; }
for f in ladder.md ladder_fits.csv ladder_gaps.csv ladder_points.csv ladder.png ladder.svg; do
  [ -s "lad/$f" ] || fail "lad/$f missing"
done
grep -q "^| untied | target | 1e+06 | .*\*\*extrapolated\*\* beyond the ladder" lad/ladder.md \
  || { cat lad/ladder.md >&2; fail "the target's gap is not flagged as an extrapolation"; }
"$PY" - <<'PY' || fail "the ladder's CSV files disagree with the runs"
import csv, json
points = list(csv.DictReader(open("lad/ladder_points.csv")))
assert len(points) == 12, points
for p in points:
    ev = json.load(open(f"lad/{p['member']}_{p['size']}_seed{p['seed']}/eval.json"))
    assert abs(float(p["loss"]) - ev["loss"]) < 1e-6 * ev["loss"], (p, ev["loss"])
fits = {r["member"]: r for r in csv.DictReader(open("lad/ladder_fits.csv"))}
for m, f in fits.items():
    if f["fitted"] == "yes":
        assert float(f["alpha_low"]) <= float(f["alpha"]) <= float(f["alpha_high"]), f
        assert int(f["replicates"]) > 150 and f["runs"] == "6", f
gaps = [r for r in csv.DictReader(open("lad/ladder_gaps.csv"))]
for g in gaps:
    assert g["resolved"] == ("yes" if float(g["gap_low"]) > 0 or float(g["gap_high"]) < 0 else "no"), g
    assert g["extrapolated"] == ("yes" if g["size"] == "target" else "no"), g
PY
# The report again (same seed): the same numbers; a run removed: named in a warning, still a report.
cp lad/ladder_gaps.csv first.csv
"$EMBER" ladder report l.yaml >/dev/null 2>&1 || fail "ladder report failed"
diff -q first.csv lad/ladder_gaps.csv >/dev/null || fail "the report changed between two calls"
# From the points alone (--points: no run directory read), the same report, byte for byte.
"$EMBER" ladder report l.yaml --points lad/ladder_points.csv --out from_points >/dev/null 2>&1 \
  || fail "ladder report --points failed"
for f in ladder.md ladder_fits.csv ladder_gaps.csv ladder_points.csv; do
  cmp "lad/$f" "from_points/$f" || fail "$f from the points differs from the one from the runs"
done
sed '3s/^tied,/wide,/' lad/ladder_points.csv >bad_points.csv
expect_error "bad_points.csv:3: no run of the ladder is member 'wide' at size 'd16l1', seed 2" \
  "$EMBER" ladder report l.yaml --points bad_points.csv --out bad_points
rm lad/untied_big_seed2/eval.json
"$EMBER" ladder report l.yaml --out again >again.md 2>again.err || { cat again.err >&2; fail "report with a run missing"; }
grep -q "warning: 1 run(s) have no results (no eval.json) and are left out: untied_big_seed2" again.err \
  || { cat again.err >&2; fail "the missing run is not named"; }
# Bad ladders: one line naming the file and key, nothing created.
sed 's/  - {params: 3.0e4, name: big}//' l.yaml >two.yaml
expect_error "two.yaml: sizes: a ladder needs at least 3 sizes to fit E, A and alpha, got 2" "$EMBER" ladder plan two.yaml
sed 's/tokens: {fixed: 5120}/tokens: {fixd: 2560}/' l.yaml >typo.yaml
expect_error "typo.yaml: tokens.fixd: unknown key (did you mean 'fixed'?)" "$EMBER" ladder run typo.yaml
sed 's/model.embedding.kind: untied/model.embedding.kind: untie/' l.yaml >kind.yaml
expect_error "kind.yaml: member 'untied' at size 'd16l1'" "$EMBER" ladder run kind.yaml
expect_error "ladder file 'none.yaml' not found" "$EMBER" ladder report none.yaml
sed 's/^out: lad/out: empty/' l.yaml >empty.yaml
expect_error "ladder report: no member has finished runs at 3 sizes" "$EMBER" ladder report empty.yaml
# The shipped ladder files stay valid: every run's config resolves (from the repository root, as
# their comments run them; no data needed to plan).
for f in "$EMBER_SOURCE_DIR"/configs/ladders/*.yaml "$EMBER_SOURCE_DIR"/experiments/ladder-cpu/ladder.yaml; do
  (cd "$EMBER_SOURCE_DIR" && "$EMBER" ladder plan "$f" --json) >shipped.json 2>shipped.err \
    || { cat shipped.err >&2; fail "the shipped ladder $f does not plan"; }
done
