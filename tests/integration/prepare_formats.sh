# Corpora as they are published: Parquet (several row groups, a null row, large_string, zstd pages),
# JSONL in gzip members and zstd frames, plain text; ember's shards hold tiktoken's ids for every
# document (corpus_formats_reference.py). Prepared in parts (--part I/N) and merged, the data
# directory is byte for byte the single-process one. Bad files and bad merges: one-line errors
# naming the file, nothing written.
source "$(dirname "$0")/lib_common.sh"
REF="$HERE/corpus_formats_reference.py"
"$PY" "$REF" write corpus || fail "writing the corpus"
inputs=(corpus/a.parquet corpus/b.jsonl.gz corpus/c.jsonl.zst corpus/d.txt corpus/e.parquet)
prep() { "$EMBER" prepare text corpus --tokenizer cl100k_base --val-fraction 0.2 --shard-tokens 3000 --no-progress "$@"; }
prep --out whole >whole.txt 2>whole.err || { cat whole.err; fail "prepare text of the corpus"; }
grep -q "1 row(s) with a null 'text' skipped" whole.err || { cat whole.err; fail "the null row was not reported"; }
"$PY" "$REF" check whole "$EMBER_TOKENIZER_DATA" cl100k_base 0.2 "${inputs[@]}" || fail "shards differ from tiktoken's"
[ "$(ls whole/train_*.bin | wc -l)" -gt 2 ] || fail "expected several train shards"

# Parts: 3 (one to three files each) and 6 (parts 3 and 5 empty: the files' middle bytes fall in
# parts 1, 2, 2, 4 and 6), merged in any order.
for n in 3 6; do
  for i in $(seq 1 "$n"); do prep --part "$i/$n" --out "parts$n/p$i" >/dev/null 2>&1 || fail "prepare --part $i/$n"; done
  "$EMBER" prepare merge $(ls -d parts$n/p* | sort -r) --out "merged$n" --no-progress >merge.txt || fail "merge of $n"
  grep -q "^$n parts, 5 files" merge.txt || { cat merge.txt; fail "merge summary"; }
  diff -r whole "merged$n" || fail "the merge of $n parts differs from the single-process prepare"
done
"$PY" - <<'PY' || fail "part manifests"
import json
parts = [json.load(open(f"parts3/p{i}/manifest.json")) for i in (1, 2, 3)]
assert [p["part"]["index"] for p in parts] == [1, 2, 3] and len({p["part"]["inputs_sha256"] for p in parts}) == 1
assert sum(len(p["sources"]) for p in parts) == 5 and all(p["sources"] for p in parts), parts
six = [len(json.load(open(f"parts6/p{i}/manifest.json"))["sources"]) for i in range(1, 7)]
assert sum(six) == 5 and six.count(0) >= 2, six  # the merge of 6 joined empty parts (3 and 5)
PY
# The merged directory trains: the trainer reads it as any prepared data.
write_tiny_config fmt.yaml merged3
"$EMBER" train -c fmt.yaml --set model.vocab_size=100277 --set model.d_model=32 --set model.n_heads=2 \
  --set model.mlp.d_ff=64 --set train.steps=2 --set optim.warmup_steps=1 --set train.seq_len=16 --set train.micro_batch=2 \
  --set eval.every=2 --set eval.batches=1 --set checkpoint.every=2 --set log.name=fmt >train.txt 2>&1 \
  || { tail -5 train.txt; fail "train on merged shards"; }

# Bad files: one line naming the file, no output directory.
mkdir -p bad
head -c 6000 corpus/a.parquet >bad/t.parquet
"$PY" - <<'PY'
b = bytearray(open("corpus/b.jsonl.gz", "rb").read())
b[400] ^= 0xFF
b[401] ^= 0x55
open("bad/x.jsonl.gz", "wb").write(b)
open("bad/t.jsonl.gz", "wb").write(open("corpus/b.jsonl.gz", "rb").read()[:-300])
open("bad/t.jsonl.zst", "wb").write(open("corpus/c.jsonl.zst", "rb").read()[:-50])
open("bad/n.jsonl.gz", "w").write('{"text": "not compressed"}\n')
PY
cp corpus/a.parquet bad/a.parquet.gz
: >bad/e.jsonl.gz
bad() {  # want file [options]
  local want="$1" file="$2"; shift 2
  expect_error "$want" "$EMBER" prepare text "$file" --tokenizer cl100k_base --out out_bad --no-progress "$@"
  grep -qF "'$file'" err.txt || { cat err.txt; fail "the error does not name $file"; }
  [ ! -e out_bad ] || fail "a failed prepare of $file left out_bad"
}
bad "not a Parquet file: Parquet magic bytes not found" bad/t.parquet
bad "has no column 'body' (it has: id, text, url); name the text column with --text-column" corpus/a.parquet --text-column body
bad "column 'id' holds int64, not strings" corpus/a.parquet --text-column id
bad "is not valid gzip data" bad/x.jsonl.gz
bad "is not valid gzip data (incorrect header check)" bad/n.jsonl.gz
bad "ends inside a gzip member (truncated?)" bad/t.jsonl.gz
bad "ends inside a zstd frame (truncated?)" bad/t.jsonl.zst
bad "is empty, where a gzip member should start (truncated?)" bad/e.jsonl.gz
bad "a Parquet file is compressed inside" bad/a.parquet.gz
expect_error "--part: expected I/N with 1 <= I <= N" prep --part 4/3 --out out_bad

# Bad merges: one line, nothing written.
"$EMBER" prepare text corpus --tokenizer cl100k_base --val-fraction 0.3 --shard-tokens 3000 --no-progress \
  --part 1/3 --out other_p1 >/dev/null 2>&1 || fail "prepare --part with another val fraction"
merge_bad() { expect_error "$1" "$EMBER" prepare merge "${@:2}" --out out_merge; [ ! -e out_merge ] || fail "a failed merge wrote"; }
merge_bad "part(s) 3 of 3 missing" parts3/p1 parts3/p2
merge_bad "part 2/3 is given twice" parts3/p1 parts3/p2 parts3/p2 parts3/p3
merge_bad "were prepared differently: val_fraction 0.2 vs 0.3" parts3/p1 other_p1 parts3/p2 parts3/p3
merge_bad "'whole' is a whole prepare, not a part" whole parts3/p2 parts3/p3
merge_bad "are parts of different prepares" parts6/p1 parts3/p2 parts3/p3
merge_bad "'nowhere' has no manifest.json" parts3/p1 nowhere
expect_error "--out 'parts3/p1' is one of the parts" "$EMBER" prepare merge parts3/p1 parts3/p2 parts3/p3 --out parts3/p1
echo OK
