# train.activation_checkpointing recomputes blocks in backward instead of keeping their
# activations; the arithmetic is the same, so full and every_k runs end with parameters
# bit-identical to a run without it (CPU, fp32).
source "$(dirname "$0")/lib_common.sh"
mkdir -p data
make_synthetic data 64 60000 6000 >/dev/null
write_tiny_config base.yaml data
for mode in none full every_k; do
  "$EMBER" train -c base.yaml --set train.steps=10 --set optim.warmup_steps=2 --set eval.every=0 \
    --set model.n_layers=3 --set train.activation_checkpointing=$mode --set train.activation_checkpointing_k=2 \
    --run-dir runs/$mode 2>$mode.err >/dev/null || { cat $mode.err; fail "training with $mode"; }
done
want=$(sha256sum <runs/none/checkpoints/step_10/model.safetensors)
for mode in full every_k; do
  [ "$(sha256sum <runs/$mode/checkpoints/step_10/model.safetensors)" = "$want" ] \
    || fail "$mode: parameters differ from the run without checkpointing"
done
grep -q "activation_checkpointing: every_k" runs/every_k/config.yaml || fail "resolved config lacks the setting"
expect_error "train.activation_checkpointing: expected one of none | full | every_k, got 'some'" \
  "$EMBER" train -c base.yaml --set train.activation_checkpointing=some
echo "activation checkpointing leaves the training bit-identical"
