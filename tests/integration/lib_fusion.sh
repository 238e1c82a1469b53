# An A/B of one fused op (sourced after lib_common.sh): 50 training steps of the tiny model on the
# synthetic corpus, fp32 and bf16 autocast, with kernels.OP = fused (run "_1") and aten ("_0").
# The loss curves must agree to 1e-2 at every logged step, the fused run must learn, the profile of
# one step must count fewer ops fused (the key really changes the path), and each run's config.yaml
# and first log lines must say which path it took.
fusion_ab() {  # OP [train args...]
  local op=$1 var="kernels.$1"
  shift
  mkdir -p data
  make_synthetic data 64 40000 4000 >/dev/null
  write_tiny_config t.yaml data
  for precision in fp32 bf16; do
    for fused in 1 0; do
      local path=aten
      [ "$fused" = 1 ] && path=fused
      "$EMBER" train -c t.yaml --set "$var=$path" --set train.steps=50 --set train.precision=$precision \
        --set eval.every=0 --set checkpoint.every=0 --set log.every=5 --set log.name="${precision}_$fused" \
        --profile 3 "$@" >"${precision}_$fused.out" 2>"${precision}_$fused.err" \
        || { cat "${precision}_$fused.err" >&2; fail "training $precision with $var=$path failed"; }
      grep -q "^  $op: $path\$" "runs/${precision}_$fused/config.yaml" || fail "config.yaml does not record $var = $path"
      grep -qE "kernels: .*\b$op=$path\b" "${precision}_$fused.err" || { cat "${precision}_$fused.err" >&2;
        fail "the first log lines do not say $op=$path"; }
    done
  done
  "$PY" - "$var" <<'PY' || fail "$var = fused and aten trained differently"
import json, sys
def losses(name):
    return [r["loss"] for r in map(json.loads, open(f"runs/{name}/metrics.jsonl")) if r.get("kind") == "train"]
def ops(name):
    return json.load(open(f"runs/{name}/profile/summary.json"))["ops_per_step"]
for precision in ("fp32", "bf16"):
    fused, other = losses(f"{precision}_1"), losses(f"{precision}_0")
    assert len(fused) == len(other) == 10, (len(fused), len(other))
    worst = max(abs(a - b) for a, b in zip(fused, other))
    assert worst < 1e-2, f"{precision}: loss curves differ by {worst}: {fused} vs {other}"
    assert fused[-1] < fused[0] - 0.5, f"{precision}: did not learn: {fused}"
    assert ops(f"{precision}_1") < ops(f"{precision}_0"), (precision, ops(f"{precision}_1"), ops(f"{precision}_0"))
    print(f"{sys.argv[1]} {precision}: worst loss difference {worst:.2e} over {len(fused)} logged steps; "
          f"ops per step {ops(f'{precision}_1'):.0f} fused, {ops(f'{precision}_0'):.0f} aten")
PY
}
