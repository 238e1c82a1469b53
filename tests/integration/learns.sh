# A tiny model on synthetic data must get well below the unigram entropy in a few hundred steps.
source "$(dirname "$0")/lib_common.sh"
mkdir -p data
H=$(make_synthetic data 64 200000 20000)
write_tiny_config tiny.yaml data
"$EMBER" train -c tiny.yaml --set train.steps=300 --set eval.every=100 --set eval.batches=8 >train.out 2>train.err \
  || { cat train.err >&2; fail "training failed"; }
loss=$(sed -n 's/^final validation loss \([0-9.]*\),.*/\1/p' train.out)
[ -n "$loss" ] || fail "no final validation loss printed"
echo "unigram entropy $H nats, final validation loss $loss"
"$PY" -c "import sys; sys.exit(0 if $loss < 0.5 * $H else 1)" || fail "loss $loss is not below half the unigram entropy $H"
# Progress lines carry the promised fields; metrics.jsonl has one record per logged step.
grep -q "tok/s | MFU" train.err || fail "progress line lacks tokens/s and MFU"
grep -q "ETA" train.err || fail "progress line lacks ETA"
"$PY" -c "
import json
r = [json.loads(l) for l in open('runs/tiny/metrics.jsonl') if '\"train\"' in l][-1]
assert 0 < r['mfu_causal'] < r['mfu'], r" || fail "metrics.jsonl lacks mfu_causal below mfu (attention halved)"
[ "$(grep -c '"kind":"train"' runs/tiny/metrics.jsonl)" -eq 60 ] || fail "expected 60 train records"
grep -q '"kind":"eval"' runs/tiny/metrics.jsonl || fail "no eval records"
grep -q "vocab_size: 64" runs/tiny/config.yaml || fail "resolved config not written"
# MFU's matmul peak: measured in full the first time this device, precision and thread count
# train (a scratch cache here), read from the cache after, measured again with --measure-peak.
short() { XDG_CACHE_HOME="$PWD/cache" "$EMBER" train -c tiny.yaml --set train.steps=2 --set optim.warmup_steps=1 \
  --set eval.batches=1 --set log.name="$1" "${@:2}" 2>"$1.err" >/dev/null || { cat "$1.err" >&2; fail "training $1 failed"; }; }
short peak_first
grep -q "matmul peak [0-9.]* GFLOP/s (measured now)" peak_first.err || { cat peak_first.err; fail "a first run did not measure the peak"; }
ls cache/ember/peak/*.json >/dev/null 2>&1 || fail "the measured peak was not cached in \$XDG_CACHE_HOME/ember/peak"
"$PY" - cache/ember/peak/*.json <<'PY'  # more than a glance can find: the next run reports the cache's
import json, sys
entry = json.load(open(sys.argv[1])); entry["flops"] = 1e18; json.dump(entry, open(sys.argv[1], "w"))
PY
short peak_cached
grep -Eq "matmul peak 1000000000.0 GFLOP/s \(.*/cache/ember/peak/[0-9a-f]+\.json\)" peak_cached.err \
  || { cat peak_cached.err; fail "a later run did not read the cached peak"; }
short peak_again --measure-peak
grep -q "matmul peak [0-9.]* GFLOP/s (measured now)" peak_again.err || { cat peak_again.err; fail "--measure-peak did not measure"; }
