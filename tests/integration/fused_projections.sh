# The fused projections (q, k, v and the gate in one GEMM, gate and up in one: model/fused_projections.h)
# against one linear per weight (EMBER_FUSED_PROJECTIONS=0) over 50 training steps of gated attention,
# fp32 and bf16 autocast: the loss curves agree to 1e-2 at every logged step, and the switch really
# changes the path (the profile of one step counts fewer ops fused).
source "$(dirname "$0")/lib_common.sh"
mkdir -p data
make_synthetic data 64 40000 4000 >/dev/null
write_tiny_config t.yaml data
for precision in fp32 bf16; do
  for fused in 1 0; do
    EMBER_FUSED_PROJECTIONS=$fused "$EMBER" train -c t.yaml --set train.steps=50 --set train.precision=$precision \
      --set model.mixer.kind=gated_attention --set eval.every=0 --set checkpoint.every=0 --set log.every=5 \
      --set log.name="${precision}_$fused" --profile 3 >"${precision}_$fused.out" 2>"${precision}_$fused.err" \
      || { cat "${precision}_$fused.err" >&2; fail "training $precision with EMBER_FUSED_PROJECTIONS=$fused failed"; }
  done
done
"$PY" - <<'PY' || fail "the fused and separate projections trained differently"
import json
def losses(name):
    return [r["loss"] for r in map(json.loads, open(f"runs/{name}/metrics.jsonl")) if r.get("kind") == "train"]
def ops(name):
    return json.load(open(f"runs/{name}/profile/summary.json"))["ops_per_step"]
for precision in ("fp32", "bf16"):
    fused, separate = losses(f"{precision}_1"), losses(f"{precision}_0")
    assert len(fused) == len(separate) == 10, (len(fused), len(separate))
    worst = max(abs(a - b) for a, b in zip(fused, separate))
    assert worst < 1e-2, f"{precision}: loss curves differ by {worst}: {fused} vs {separate}"
    assert fused[-1] < fused[0] - 0.5, f"{precision}: did not learn: {fused}"
    assert ops(f"{precision}_1") < ops(f"{precision}_0"), (precision, ops(f"{precision}_1"), ops(f"{precision}_0"))
    print(f"{precision}: worst loss difference {worst:.2e} over {len(fused)} logged steps; ATen ops per step "
          f"{ops(f'{precision}_1'):.0f} fused, {ops(f'{precision}_0'):.0f} separate")
PY
echo "fused_projections: ok"
