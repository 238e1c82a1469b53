# Every shipped config validates; the tapered family keeps the uniform budget exactly at every
# scale, and the uniform models land on the paper's sizes.
source "$(dirname "$0")/lib_common.sh"
CONFIGS="$EMBER_SOURCE_DIR/configs"
"$EMBER" config -c "$CONFIGS/tiny.yaml" >/dev/null || fail "tiny.yaml does not validate"
for scale in cpu:0 440m:439.6 760m:766.8 1.3b:1308.7; do
  name=${scale%%:*}; want=${scale#*:}
  for overlay in uniform linear cosine sigmoid wider_early wider_middle wider_late; do
    "$EMBER" inspect -c "$CONFIGS/tapered/$name.yaml" "$CONFIGS/tapered/$overlay.yaml" --json >"$name.$overlay.json" \
      || fail "tapered/$name.yaml + $overlay.yaml does not validate"
  done
  "$PY" - "$name" "$want" <<'PY' || fail "tapered $name: budgets differ or size is off"
import json, sys
name, want = sys.argv[1], float(sys.argv[2])
runs = {o: json.load(open(f"{name}.{o}.json")) for o in
        ["uniform", "linear", "cosine", "sigmoid", "wider_early", "wider_middle", "wider_late"]}
base = runs["uniform"]
for o, r in runs.items():
    assert r["total_params"] == base["total_params"], (o, r["total_params"], base["total_params"])
    assert r["train_flops_per_token"] == base["train_flops_per_token"], o
    widths = [l["d_ff"] for l in r["layers"]]
    if o in ("linear", "cosine", "sigmoid", "wider_early"):
        assert widths == sorted(widths, reverse=True) and widths[0] > widths[-1], (o, widths)
if want:
    got = base["total_params"] / 1e6
    assert abs(got - want) < 0.1, (name, got, want)
print(name, base["total_params"], [l["d_ff"] for l in runs["cosine"]["layers"]])
PY
done
expect_error "start = 1.6 and end = 0.5 must sum to 2" "$EMBER" inspect "$CONFIGS/tapered/cpu.yaml" \
  --set model.mlp.taper.schedule=cosine --set model.mlp.taper.start=1.6
expect_error "3 groups do not divide n_layers = 8" "$EMBER" inspect "$CONFIGS/tapered/cpu.yaml" \
  --set model.mlp.taper.schedule=groups --set model.n_layers=8
# Two configs side by side.
"$EMBER" inspect -c "$CONFIGS/tapered/cpu.yaml" "$CONFIGS/tapered/uniform.yaml" "$CONFIGS/tapered/cosine.yaml" >diff.txt
grep -q "B - A" diff.txt && grep -q "total_params" diff.txt || fail "side-by-side inspect"
echo "all configs validate; tapered budgets are exact"
