# Gradient accumulation: k micro-steps of B sequences equal one step of k x B sequences (the same
# windows in the same order), up to float summation order. Tolerance: every logged loss within
# 1e-5 relative, and final parameters within 1e-4 of the largest parameter, after 20 AdamW steps.
source "$(dirname "$0")/lib_common.sh"
mkdir -p data
make_synthetic data 64 100000 10000 >/dev/null
write_tiny_config base.yaml data
for shape in 8:1 4:2 2:4; do
  b=${shape%%:*}; k=${shape#*:}
  "$EMBER" train -c base.yaml --set train.steps=20 --set optim.warmup_steps=5 --set log.every=1 \
    --set train.micro_batch=$b --set train.grad_accum=$k --set eval.every=0 --run-dir runs/b$b 2>b$b.err >/dev/null \
    || { cat b$b.err; fail "training with micro_batch $b x grad_accum $k"; }
done
"$PY" "$HERE/same_training.py" 20 runs/b8 runs/b4 runs/b2 || fail "accumulated steps differ from the full batch"
echo "gradient accumulation matches the full batch"
