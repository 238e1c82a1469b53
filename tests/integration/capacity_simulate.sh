# ember capacity simulate + fit on a small grid: the optimiser beats the random baseline at every
# point, the files round-trip into fit, and fit reports constants, R^2 and MAPE.
source "$(dirname "$0")/lib_common.sh"
"$EMBER" capacity simulate --k 40,80,120 --d 8,16 --draws 5 --steps 100 --device cpu --out sweep.csv \
  >sweep.out 2>sweep.err || { cat sweep.err; fail "simulate"; }
grep -q "simulate: point 12/12" sweep.err || { cat sweep.err; fail "no per-point progress"; }
"$PY" - <<'PY' || fail "simulate results are wrong"
import csv
rows = list(csv.DictReader(open("sweep.csv")))
assert len(rows) == 12 and {r["kind"] for r in rows} == {"random", "optimised"}, rows
best = {(r["k"], r["d"]): float(r["eps"]) for r in rows if r["kind"] == "random"}
for r in rows:
    if r["kind"] == "optimised":
        assert 0 < float(r["eps"]) < best[(r["k"], r["d"])], (r, best)
        assert int(r["exponent"]) == min(int(40 / __import__("math").log(int(r["d"]))), 20), r
PY
"$EMBER" capacity fit sweep.csv --json >fit.json || fail "fit"
"$PY" - <<'PY' || fail "fit output is wrong"
import json, math
fits = {f["form"]: f for f in json.load(open("fit.json"))}
assert set(fits) == {"jl", "single", "full"}, fits
assert fits["jl"]["points_kind"] == "random" and fits["full"]["points_kind"] == "optimised", fits
assert set(fits["full"]["params"]) == {"C", "a", "b", "c"} and fits["full"]["points"] == 6, fits["full"]
for f in fits.values():
    assert math.isfinite(f["r2"]) and math.isfinite(f["mape_percent"]) and f["params"]["C"] > 0, f
PY
"$EMBER" capacity fit sweep.csv | grep -q "Use the full-form constants" || fail "fit table"
"$EMBER" capacity simulate --mode random --k 30,60 --d 4 --draws 2 --out r.json >/dev/null 2>&1 || fail "json out"
"$EMBER" capacity fit r.json --form jl --json | grep -q '"points_kind": "random"' || fail "fit of a JSON sweep"
# A 2 x 2 grid (the README's example shape): the full form's 4 constants need more than 4 points,
# so `fit` fits the others and says why the full form is missing.
"$EMBER" capacity simulate --k 30,60 --d 4,8 --draws 2 --steps 20 --device cpu --out small.csv >/dev/null 2>&1 \
  || fail "small grid"
"$EMBER" capacity fit small.csv >small_fit.out 2>small_fit.err || { cat small_fit.err; fail "fit of a 2 x 2 grid"; }
grep -q "^jl " small_fit.out && grep -q "^single " small_fit.out || { cat small_fit.out; fail "jl / single not fitted"; }
grep -q "the full form needs more than 4 'optimised' points, the file has 4: not fitted" small_fit.err \
  || { cat small_fit.err; fail "the skipped full form is not explained"; }
expect_error "--k: expected positive integers" "$EMBER" capacity simulate --k 10:5:1 --out x.csv
expect_error "expected a .csv or .json file name" "$EMBER" capacity simulate --k 10 --d 4 --out x.txt
[ ! -e x.csv ] && [ ! -e x.txt ] || fail "a refused simulate wrote its --out file"
expect_error "no 'optimised' points to fit the full form" "$EMBER" capacity fit r.json --form full --kind optimised
echo "ember capacity simulate and fit work end to end"
