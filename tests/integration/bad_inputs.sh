# Bad inputs: one clear line on stderr, a non-zero exit, and no run directory left behind.
source "$(dirname "$0")/lib_common.sh"
mkdir -p data
make_synthetic data 64 5000 1000 >/dev/null
write_tiny_config good.yaml data

expect_error "config file 'missing.yaml' does not exist" "$EMBER" train -c missing.yaml
# A mistyped command is named with the closest one, with or without --help, at any level.
expect_error "unknown command 'trian'; did you mean 'train'?" "$EMBER" trian
expect_error "unknown command 'trian'; did you mean 'train'?" "$EMBER" trian --help
expect_error "unknown command 'prepare txet'; did you mean 'prepare text'?" "$EMBER" prepare txet x --out y
expect_error "unknown command 'zzzzzz' (see ember --help)" "$EMBER" zzzzzz
printf 'model: {d_model: 64\ntrain: [\n' >bad.yaml
expect_error "bad.yaml: invalid YAML" "$EMBER" train -c bad.yaml
expect_error "unknown key 'train.stpes' (did you mean 'train.steps'?)" "$EMBER" train -c good.yaml --set train.stpes=3
expect_error "model.d_model: d_model = 60 must be divisible by n_heads = 8" \
  "$EMBER" train -c good.yaml --set model.d_model=60 --set model.n_heads=8
expect_error "token id 63 does not fit model.vocab_size = 32" "$EMBER" train -c good.yaml --set model.vocab_size=32
expect_error "data.train: 'nowhere/*.bin' matches no shard file" "$EMBER" train -c good.yaml --set 'data.train=[nowhere/*.bin]'
head -c 2048 /dev/zero >data/val_999.bin
expect_error "shard 'data/val_999.bin' has bad magic 0" "$EMBER" train -c good.yaml
rm data/val_999.bin
[ ! -e runs ] || fail "a failed start left a run directory behind"

# A started run is never silently overwritten.
"$EMBER" train -c good.yaml --set train.steps=20 >/dev/null 2>&1 || fail "good config should train"
before=$(sha256sum <runs/tiny/checkpoints/step_20/model.safetensors)
expect_error "already has checkpoints: pass --resume" "$EMBER" train -c good.yaml --set train.steps=20
[ "$(sha256sum <runs/tiny/checkpoints/step_20/model.safetensors)" = "$before" ] || fail "checkpoint changed"

# Ids of different tokenizers never meet: a val set or an eval set prepared with another tokenizer
# than the training data is refused, naming both manifests.
mkdir -p other && cp data/val_*.bin other/
echo '{"tokenizer": "bytes", "vocab_size": 256}' >data/manifest.json
echo '{"tokenizer": "1k", "tokenizer_spec": "1k.tiktoken", "tokenizer_sha256": "ab12", "vocab_size": 1024}' \
  >other/manifest.json
expect_error "data.val was tokenized with '1k.tiktoken' (other/manifest.json) but data.train with 'bytes'" \
  "$EMBER" train -c good.yaml --set 'data.val=[other/val_*.bin]' --run-dir runs/mixed
[ ! -e runs/mixed ] || fail "a refused start left a run directory"
expect_error "--data was tokenized with '1k.tiktoken'" "$EMBER" eval runs/tiny --data 'other/val_*.bin'
expect_error "--batches: must be non-negative" "$EMBER" eval runs/tiny --batches=-1
rm data/manifest.json

expect_error "neither a run nor a checkpoint" "$EMBER" eval nowhere
expect_error "train: give -c CONFIG" "$EMBER" train --set train.steps=3
echo "bad inputs give one line and a non-zero exit"
