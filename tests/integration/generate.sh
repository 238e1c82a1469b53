# ember generate end to end on a byte-level run: greedy output is deterministic and --top-k 1
# samples the same ids (the argmax is tested against the model in the unit tests); sampling is
# reproducible for a seed and changes with it; --prompt-file reads the prompt --prompt gives; the
# prompt goes through the run's tokenizer; errors are one line.
source "$(dirname "$0")/lib_common.sh"
mkdir -p corpus
for i in $(seq 1 40); do
  printf 'def function_%d(x):\n    return x * %d + 1\n\n' "$i" "$i" >"corpus/f$i.txt"
done
"$EMBER" prepare bytes corpus --ext .txt --out data --val-fraction 0.2 >/dev/null || fail "prepare bytes"
cat >g.yaml <<YAML
model: {vocab_size: 256, d_model: 64, n_layers: 2, n_heads: 4, max_seq_len: 64, mlp: {d_ff: 128}}
data: {train: [data/train_*.bin], val: [data/val_*.bin]}
train: {steps: 40, micro_batch: 8, seq_len: 32, seed: 3, threads: 2}
optim: {lr: 3.0e-3, warmup_steps: 5}
eval: {every: 0, batches: 2}
checkpoint: {every: 0, keep: 1}
log: {dir: runs, name: g, every: 10}
YAML
"$EMBER" train -c g.yaml >/dev/null 2>&1 || fail "training"
"$EMBER" generate runs/g --prompt "def " --tokens 20 --temperature 0 --json >a.json || fail "greedy generate"
"$EMBER" generate runs/g --prompt "def " --tokens 20 --seed 5 --json >s1.json || fail "sampling"
"$EMBER" generate runs/g --prompt "def " --tokens 20 --seed 5 --json >s2.json || fail "sampling"
cmp s1.json s2.json || fail "the same seed gave different samples"
"$EMBER" generate runs/g --prompt "def " --tokens 20 --seed 6 --json >s3.json || fail "sampling"
! cmp -s s1.json s3.json || fail "--seed 5 and --seed 6 sampled the same 20 tokens"
"$EMBER" generate runs/g --prompt "def " --tokens 20 --seed 6 --top-k 1 --json >k1.json || fail "--top-k 1"
printf 'def ' >prompt.txt
"$EMBER" generate runs/g --prompt-file prompt.txt --tokens 20 --temperature 0 --json >pf.json || fail "--prompt-file"
# A second greedy process on the same prompt: the same output byte for byte.
cmp a.json pf.json || fail "greedy decoding is not deterministic (or --prompt-file read another prompt)"
"$PY" - <<'PY' || fail "--top-k 1 or --prompt-file"
import json
a, k1, pf = (json.load(open(f)) for f in ("a.json", "k1.json", "pf.json"))
assert k1["ids"] == a["ids"], ("--top-k 1 is not greedy", k1["ids"], a["ids"])
assert pf["ids"] == a["ids"] and pf["prompt"] == "def ", ("--prompt-file differs from --prompt", pf, a)
PY
"$PY" - <<'PY' || fail "generate JSON"
import json
a = json.load(open("a.json"))
assert a["prompt"] == "def " and 0 < a["tokens"] <= 20 and len(a["ids"]) == a["tokens"], a
if all(i < 128 for i in a["ids"]):  # byte-level: ids are the bytes (invalid UTF-8 shows as U+FFFD)
    assert bytes(a["ids"]).decode("ascii") == a["continuation"], a
assert all(0 < i < 256 for i in a["ids"]), a  # 0 ends a document and is not returned
PY
"$EMBER" generate runs/g --prompt "def " --tokens 5 --temperature 0 >text.out || fail "streaming output"
[ "$(wc -l <text.out)" -ge 1 ] || fail "no text printed"
expect_error "give exactly one of --prompt TEXT or --prompt-file FILE" "$EMBER" generate runs/g
expect_error "--prompt: the prompt is empty" "$EMBER" generate runs/g --prompt ''
# More tokens than max_seq_len leaves room for: it stops there and says so (JSON: "stopped").
"$EMBER" generate runs/g --prompt "def " --tokens 500 --temperature 0 --keep-going --json >long.json \
  || fail "generate past max_seq_len"
"$PY" -c "
import json; a = json.load(open('long.json'))
assert a['stopped'] == 'max_seq_len' and a['tokens'] == 64 - 4 + 1, a  # the last is sampled, not fed" || fail "the max_seq_len stop is not reported"
"$EMBER" generate runs/g --prompt "def " --tokens 500 --temperature 0 --keep-going >long.out 2>long.err \
  || fail "generate past max_seq_len (text)"
grep -q "stopped after 61 tokens: prompt and continuation fill model.max_seq_len = 64" long.err \
  || { cat long.err; fail "no note on the max_seq_len stop"; }
# A model wider than its tokenizer (vocab 320, bytes 256) never samples an id the tokenizer lacks.
# One step is enough: at temperature 50 its distribution is near uniform (the 60 draws spread over
# 0..255), so unmasked, a fifth of the draws would land in 256..319 (none of 60: p = 0.8^60 = 1.5e-6);
# a longer training only pushes the never-seen ids down.
"$EMBER" train -c g.yaml --set model.vocab_size=320 --set log.name=wide --set train.steps=1 --set optim.warmup_steps=0 \
  >/dev/null 2>&1 || fail "training the wide model"
"$EMBER" generate runs/wide --prompt "def " --tokens 60 --temperature 50 --seed 1 --keep-going --json >wide.json \
  || fail "sampling from the wide model"
"$PY" -c "
import json; a = json.load(open('wide.json'))
assert a['tokens'] == 60 and max(a['ids']) < 256, a" || fail "an id beyond the tokenizer was sampled"
rc=0; "$EMBER" generate runs/g --prompt x --top-p 1.5 >/dev/null 2>err.txt || rc=$?
[ "$rc" -ne 0 ] && grep -q -- "--top-p" err.txt || fail "--top-p 1.5 accepted (rc $rc)"
# eval --buckets reads the counts prepare wrote (no counting) and reports per frequency.
"$EMBER" eval runs/g --batches 0 --buckets --json >bk.json 2>bk.err || { cat bk.err; fail "eval --buckets"; }
! grep -q "counting" bk.err || fail "eval --buckets counted the shards although prepare wrote the counts"
"$PY" -c "
import json; r = json.load(open('bk.json')); assert sum(b['tokens'] for b in r['buckets']) == r['tokens'] > 0, r" \
  || fail "buckets do not add up"
echo "generate: greedy is deterministic, samples reproduce"
