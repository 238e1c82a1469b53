# log.tensorboard: the metrics as TensorBoard scalars, read back by TensorBoard's own
# EventAccumulator (the venv's tensorboard package): train, eval and capacity scalars at the steps
# and values of metrics.jsonl; after a resume from an earlier checkpoint (one event file per
# session) TensorBoard shows each step once.
source "$(dirname "$0")/lib_common.sh"
"$PY" -c "import tensorboard" || fail "tensorboard is not in the venv (scripts/setup.sh installs it)"
mkdir -p data && make_synthetic data 64 20000 4000 >/dev/null
write_tiny_config t.yaml data
common=(--set train.steps=20 --set log.every=5 --set eval.every=10 --set eval.capacity_every=10
        --set eval.capacity_pairs=2000 --set checkpoint.every=10 --set log.tensorboard=true)
"$EMBER" train -c t.yaml "${common[@]}" >first.out 2>&1 || { cat first.out >&2; fail "training failed"; }
rm -rf runs/tiny/checkpoints/step_20  # resume from step 10: steps 15 and 20 are logged again
"$EMBER" train -c t.yaml "${common[@]}" --resume >second.out 2>&1 \
  || { cat second.out >&2; fail "resume failed"; }
[ "$(ls runs/tiny/tensorboard | wc -l)" -eq 2 ] || fail "expected one event file per session"
"$PY" - <<'PY' || fail "TensorBoard does not read back the metrics"
import json
import numpy as np
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
ea = EventAccumulator("runs/tiny/tensorboard", size_guidance={"scalars": 0})
ea.Reload()
tags = set(ea.Tags()["scalars"])
for tag in ("train/loss", "train/lr", "train/grad_norm", "train/tokens_per_s", "eval/val_loss", "eval/val_ppl",
            "capacity/input_epsilon", "capacity/head_epsilon"):
    assert tag in tags, (tag, sorted(tags))
records = [json.loads(line) for line in open("runs/tiny/metrics.jsonl")]
for kind, key in (("train", "loss"), ("eval", "val_loss"), ("capacity", "input_epsilon")):
    want = [(r["step"], np.float32(r[key])) for r in records if r["kind"] == kind]
    got = [(e.step, np.float32(e.value)) for e in ea.Scalars(f"{kind}/{key}")]
    assert got == want, (kind, got, want)
assert [r["step"] for r in records if r["kind"] == "train"] == [5, 10, 15, 20], records
PY
echo "TensorBoard reads train, eval and capacity scalars, once per step across a resume"
