# A truncated checkpoint is refused by name, and resume falls back to the previous complete one.
source "$(dirname "$0")/lib_common.sh"
mkdir -p data
make_synthetic data 64 20000 4000 >/dev/null
write_tiny_config c.yaml data
"$EMBER" train -c c.yaml --set train.steps=40 >/dev/null 2>&1 || fail "training failed"
ck=runs/tiny/checkpoints
truncate -s 1000 $ck/step_40/model.safetensors
expect_error "step_40' is corrupt: model.safetensors fails its SHA-256 checksum" "$EMBER" eval $ck/step_40
# Evaluating the run picks the newest checkpoint that verifies, with a warning.
"$EMBER" eval runs/tiny --json >eval.json 2>eval.err || { cat eval.err; fail "eval of run"; }
grep -q '"step":20' eval.json || fail "eval did not fall back to step 20"
grep -q "step_40' is corrupt" eval.err || { cat eval.err; fail "no warning about the corrupt checkpoint"; }
# Resume falls back to step 20 and re-trains to 40.
"$EMBER" train --resume --run-dir runs/tiny >/dev/null 2>resume.err || { cat resume.err; fail "resume"; }
grep -q "resumed from runs/tiny/checkpoints/step_20" resume.err || { cat resume.err; fail "did not fall back"; }
"$EMBER" eval $ck/step_40 --json | grep -q '"step":40' || fail "step 40 not rewritten"
echo "corruption detected and resume fell back"
