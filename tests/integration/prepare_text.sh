# BPE preparation end to end: train a small tokenizer, prepare text + JSONL with it, train a few
# steps on the shards, evaluate on .npy and headerless nanoGPT copies of the val split; clear
# one-line errors for bad input; an interrupted prepare leaves no manifest.
source "$(dirname "$0")/lib_common.sh"
mkdir -p corpus
for i in $(seq 1 60); do
  printf 'Document %d. The quick brown fox jumps over the lazy dog; tokens, merges and ranks.\n' "$i" >"corpus/d$i.txt"
  printf 'It was the best of times, it was the worst of times (%d).\n' "$i" >>"corpus/d$i.txt"
done
for i in $(seq 1 40); do printf '{"text": "line %d of the jsonl corpus, with \\u00e9 and \\u65e5\\u672c"}\n' "$i"; done >corpus/docs.jsonl
"$EMBER" tokenizer train corpus --ext .txt --vocab-size 400 --out tok/t.tiktoken >/dev/null 2>&1 || fail "tokenizer train"
"$EMBER" prepare text corpus --tokenizer tok/t.tiktoken --out data --val-fraction 0.2 --no-progress >prep.txt \
  || fail "prepare text"
grep -q "^61 files" prep.txt || { cat prep.txt; fail "expected 61 source files"; }
"$PY" - <<'PY' || fail "manifest / counts"
import json
m = json.load(open("data/manifest.json"))
assert m["vocab_size"] == 400 and m["separator"] == 399 and m["dtype"] == "uint16", m
assert len(m["sources"]) == 61 and all(len(s["sha256"]) == 64 for s in m["sources"])
counts = json.load(open("data/train_token_counts.json"))
assert len(counts) == 400 and sum(counts) == m["train_tokens"], (len(counts), sum(counts))
PY
[ ! -e data/.incomplete ] || fail "staging folder left behind"

write_tiny_config bpe.yaml data
"$EMBER" train -c bpe.yaml --set model.vocab_size=400 --set train.steps=6 --set optim.warmup_steps=2 \
  --set train.seq_len=16 --set eval.every=3 --set checkpoint.every=3 --set log.name=bpe >train.txt 2>&1 \
  || { tail -5 train.txt; fail "train on BPE shards"; }

# The same val tokens as .npy and as a headerless nanoGPT file give the same loss.
"$PY" - <<'PY'
import numpy as np
raw = open("data/val_00000.bin", "rb").read()[1024:]
toks = np.frombuffer(raw, dtype=np.uint16)
np.save("val.npy", toks)
toks.tofile("val_nanogpt.bin")
PY
# One eval reads the three as named data sets, each on its own.
"$EMBER" eval runs/bpe --data shard=data/val_00000.bin --data npy=val.npy --data nanogpt=nanogpt:val_nanogpt.bin \
  --batches 0 --json >formats.json || fail "eval of the three formats"
"$PY" - <<'PY' || { cat formats.json; fail "losses differ across shard formats"; }
import json
sets = json.load(open("formats.json"))["datasets"]
assert [s["data"] for s in sets] == ["shard", "npy", "nanogpt"], sets
assert len({s["loss"] for s in sets}) == 1 and len({s["tokens"] for s in sets}) == 1 and sets[0]["tokens"] > 0, sets
PY

# Analyses read plain text through the run's tokenizer (found via the data's manifest): the same
# result as on a shard of the ids `ember tokenizer encode` gives for that text.
for i in $(seq 1 12); do echo "The quick brown fox jumps over the lazy dog, it was the best of times $i."; done >notes.txt
"$EMBER" analyze alignment --ckpt runs/bpe --data notes.txt --batches 1 --batch-size 2 --json >text.json \
  || fail "analyze alignment on text with a BPE run"
"$EMBER" tokenizer encode --file tok/t.tiktoken --json <notes.txt >ids.json || fail "tokenizer encode"
"$PY" - <<'PY'
import json, numpy as np
ids = np.array(json.load(open("ids.json")), dtype=np.uint16)
header = np.zeros(256, dtype=np.int32)
header[:3] = [20240520, 1, len(ids)]
open("notes.bin", "wb").write(header.tobytes() + ids.tobytes())
PY
"$EMBER" analyze alignment --ckpt runs/bpe --data notes.bin --batches 1 --batch-size 2 --json >shard.json || fail "shard"
"$PY" - <<'PY' || fail "text and shard analyses differ"
import json
a, b = json.load(open("text.json")), json.load(open("shard.json"))
assert a["tokens"] == b["tokens"] == 2 * 16 and len(a["layers"]) == 2, (a, b)
assert a["layers"] == b["layers"], (a["layers"], b["layers"])
PY
printf 'hi\n' >short.txt  # too short for one window: the error names the file, not a scratch shard
expect_error "shards starting with 'short.txt' hold" \
  "$EMBER" analyze alignment --ckpt runs/bpe --data short.txt --batches 1 --batch-size 2
mv tok/t.tiktoken tok/moved.tiktoken
expect_error "was prepared with tokenizer 'tok/t.tiktoken', which is not found" \
  "$EMBER" analyze alignment --ckpt runs/bpe --data notes.txt --batches 1 --batch-size 2
mv tok/moved.tiktoken tok/t.tiktoken

# --jsonl-field: the same documents under another field give the same shards (the split goes by
# file name and line, so both files are docs.jsonl, prepared from their own folders).
mkdir -p jl_text jl_body && cp corpus/docs.jsonl jl_text/ && sed 's/"text"/"body"/' corpus/docs.jsonl >jl_body/docs.jsonl
(cd jl_text && "$EMBER" prepare text docs.jsonl --tokenizer ../tok/t.tiktoken --out out --val-fraction 0.3 --no-progress) \
  >/dev/null || fail "prepare text of JSONL"
(cd jl_body && "$EMBER" prepare text docs.jsonl --tokenizer ../tok/t.tiktoken --out out --val-fraction 0.3 \
  --jsonl-field body --no-progress) >/dev/null || fail "prepare text --jsonl-field body"
for f in jl_text/out/*.bin; do cmp "$f" "jl_body/out/$(basename "$f")" || fail "--jsonl-field body: $(basename "$f") differs"; done
# --val-fraction 0: a train-only corpus (no val shards); a run on it says it has no validation set,
# and asking for its val split says why there is none. An empty split's error counts documents
# (JSONL lines), not files.
"$EMBER" prepare text corpus/docs.jsonl --tokenizer tok/t.tiktoken --out trainonly --val-fraction 0 --no-progress \
  >trainonly.txt || fail "prepare text --val-fraction 0"
grep -q "^1 files (40 documents)" trainonly.txt || { cat trainonly.txt; fail "the summary does not count the documents"; }
"$PY" -c "import json; m = json.load(open('trainonly/manifest.json'))
assert m['val_shards'] == [] and m['val_tokens'] == 0 and m['train_tokens'] > 0, m" || fail "the train-only manifest"
write_tiny_config trainonly.yaml trainonly
ONLY=(-c trainonly.yaml --set model.vocab_size=400 --set train.steps=2 --set optim.warmup_steps=1 --set train.seq_len=16)
"$EMBER" train "${ONLY[@]}" --set "data.val=[]" --set log.name=trainonly >trainonly_train.txt 2>&1 ||
  { cat trainonly_train.txt; fail "training without a validation set"; }
grep -q "no validation set (data.val is empty)" trainonly_train.txt || fail "the run does not say it has no validation set"
expect_error "trainonly was prepared with --val-fraction 0: it has no val split" \
  "$EMBER" train "${ONLY[@]}" --set log.name=trainonly_val
expect_error "the val split is empty: 40 document(s) went by name to train" \
  "$EMBER" prepare text corpus/docs.jsonl --tokenizer tok/t.tiktoken --out tiny_val --val-fraction 0.000001 --no-progress
expect_error "expected a JSON object with a string field 'text'" \
  "$EMBER" prepare text jl_body/docs.jsonl --tokenizer tok/t.tiktoken --out jl_bad --no-progress
printf '{"text": "ok"}\n{"txt": "no"}\n' >bad.jsonl
expect_error "bad.jsonl:2: expected a JSON object with a string field 'text'" \
  "$EMBER" prepare text bad.jsonl --tokenizer tok/t.tiktoken --out bad --no-progress
[ ! -e bad ] || fail "a failed prepare left its new output directory behind"
expect_error "bad.jsonl:2:" "$EMBER" prepare text bad.jsonl --tokenizer tok/t.tiktoken --out new/nested/ --no-progress
[ ! -e new ] || fail "a failed prepare left the folders it made behind"
expect_error "input 'nowhere' does not exist" "$EMBER" prepare text nowhere --tokenizer tok/t.tiktoken --out bad
expect_error "unknown corpus 'wiki'" "$EMBER" prepare corpus wiki --tokenizer tok/t.tiktoken --out bad
# prepare bytes of a single file: its last --val-fraction, cut after a newline, is the validation
# split (by-document assignment would leave one split empty).
"$PY" -c "open('one.txt', 'w').write(''.join(f'line {i} of the only document\\n' for i in range(1000)))"
"$EMBER" prepare bytes one.txt --out one --val-fraction 0.1 >/dev/null || fail "prepare bytes of one file"
"$PY" - <<'PY' || fail "the single file was not split by its tail"
import json, os
m = json.load(open("one/manifest.json"))
size = os.path.getsize("one.txt")
assert m["train_tokens"] + m["val_tokens"] == size + 2, m  # + one separator per part
assert abs(m["val_tokens"] / size - 0.1) < 0.01, m
train, val = m["sources"]
assert train["split"] == "train" and val["split"] == "val" and val["from_byte"] == train["bytes"], m["sources"]
assert open("one.txt", "rb").read()[val["from_byte"] - 1:val["from_byte"]] == b"\n", val
PY
# A prepare that fails leaves an earlier dataset in its directory as it was.
cp one/manifest.json one.manifest.before
mkdir -p two && cp one.txt two/a.txt && cp one.txt two/b.txt
expect_error "the val split is empty: 2 document(s) went by name to train with --val-fraction 1e-06" \
  "$EMBER" prepare bytes two --out one --val-fraction 0.000001
cmp -s one/manifest.json one.manifest.before && ls one/train_00000.bin one/val_00000.bin >/dev/null \
  || fail "a failed prepare damaged the earlier dataset"
[ ! -e one/.incomplete ] || fail "a failed prepare left its staging folder"
echo OK
