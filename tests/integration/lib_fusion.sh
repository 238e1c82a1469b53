# An A/B of a fusion's switch (sourced after lib_common.sh): 50 training steps of the tiny model on
# the synthetic corpus, fp32 and bf16 autocast, with the environment variable VAR at 1 (fused, also
# where the default would not fuse) and 0.
# The loss curves must agree to 1e-2 at every logged step, the fused run must learn, and the profile
# of one step must count fewer ops fused: the switch really changes the path.
fusion_ab() {  # VAR [train args...]
  local var=$1
  shift
  mkdir -p data
  make_synthetic data 64 40000 4000 >/dev/null
  write_tiny_config t.yaml data
  for precision in fp32 bf16; do
    for fused in 1 0; do
      env "$var=$fused" "$EMBER" train -c t.yaml --set train.steps=50 --set train.precision=$precision \
        --set eval.every=0 --set checkpoint.every=0 --set log.every=5 --set log.name="${precision}_$fused" \
        --profile 3 "$@" >"${precision}_$fused.out" 2>"${precision}_$fused.err" \
        || { cat "${precision}_$fused.err" >&2; fail "training $precision with $var=$fused failed"; }
    done
  done
  "$PY" - "$var" <<'PY' || fail "$var=1 and $var=0 trained differently"
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
          f"ops per step {ops(f'{precision}_1'):.0f} with 1, {ops(f'{precision}_0'):.0f} with 0")
PY
}
