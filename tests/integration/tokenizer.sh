# Tokenizer CLI: ids identical to Python tiktoken on mixed text for each published encoding,
# decode(encode(x)) == x, training a BPE and using it through the same engine, clear errors.
source "$(dirname "$0")/lib_common.sh"
# The data ships in third_party/tokenizers; a missing folder or file is a failure, never a skip.
DATA="${EMBER_TOKENIZER_DATA:-}"
[ -n "$DATA" ] || fail "EMBER_TOKENIZER_DATA is not set (tests/CMakeLists.txt points it at third_party/tokenizers)"
[ -d "$DATA" ] || fail "tokenizer data folder $DATA is missing (it ships in the repo as third_party/tokenizers)"
for f in encodings.json r50k_base.tiktoken cl100k_base.tiktoken o200k_base.tiktoken llama3.tiktoken; do
  [ -s "$DATA/$f" ] || fail "tokenizer data file $DATA/$f is missing or empty (it ships in third_party/tokenizers)"
done
"$PY" -c "import tiktoken" 2>/dev/null \
  || fail "Python tiktoken is not importable by $PY (the differential reference; run scripts/setup.sh or set EMBER_PYTHON)"
export EMBER_TOKENIZER_DIR="$DATA"
mkdir -p home

# The texts (mixed.txt and prepare text's long documents below) come from one Python process, and
# tiktoken's ids for all of them from one more, after ember's side has run.
mkdir -p long
"$PY" - "$HERE" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from tokenizer_reference import mixed_text
open("mixed.txt", "w", encoding="utf-8").write(mixed_text(2, 11))
open("long/line.txt", "w").write("hello world " * 436906)  # 5.2 MB without a newline
body = ("It was the best of times.\n" * 170000)[: 4 * 1024 * 1024 - 3]
open("long/runs.txt", "w").write(body + "\n" * 6 + "the end of it\n" + "more text here\n" * 1000)
PY
PRESETS=(r50k_base cl100k_base o200k_base llama3)
for enc in "${PRESETS[@]}"; do
  if [ "$enc" = r50k_base ]; then
    # The build's binary finds the presets through <build>/share/ember/tokenizers whatever HOME is:
    # r50k_base's ids, checked against tiktoken below, come from there (an empty HOME, no
    # $EMBER_TOKENIZER_DIR); the other presets and every decode read $EMBER_TOKENIZER_DIR.
    env -u EMBER_TOKENIZER_DIR -u XDG_CACHE_HOME HOME="$SCRATCH/home" "$EMBER" tokenizer encode --preset "$enc" \
      <mixed.txt >"ours_$enc.txt" || fail "the build's ember does not find the r50k_base preset with an empty HOME"
  else
    "$EMBER" tokenizer encode --preset "$enc" <mixed.txt >"ours_$enc.txt"
  fi
  "$EMBER" tokenizer decode --preset "$enc" <"ours_$enc.txt" >"back_$enc.txt"
  cmp -s mixed.txt "back_$enc.txt" || fail "$enc: decode(encode(x)) != x"
done

# JSON output, special tokens, invalid UTF-8 round trip. --stats: the ids on stdout as without it
# (the --json ones), the counts on stderr.
[ "$(printf 'Hello world' | "$EMBER" tokenizer encode --preset cl100k_base --json --stats 2>stats.err)" = "[9906, 1917]" ] \
  || fail "--json output (with --stats)"
grep -q "^11 bytes -> 2 tokens in " stats.err || { cat stats.err; fail "--stats did not count 11 bytes and 2 tokens"; }
[ "$(printf 'a<|endoftext|>' | "$EMBER" tokenizer encode --preset r50k_base --specials)" = "64 50256" ] \
  || fail "--specials"
printf 'caf\xc3 \xff\xfe ok\xed\xa0\x80' >bad_utf8.txt
"$EMBER" tokenizer encode --preset o200k_base <bad_utf8.txt | "$EMBER" tokenizer decode --preset o200k_base >bad_back.txt
cmp -s bad_utf8.txt bad_back.txt || fail "invalid UTF-8 does not round-trip"

# Train on a small corpus, then encode/decode through the same engine.
mkdir -p corpus
head -c 600000 mixed.txt >corpus/a.txt
tail -c 600000 mixed.txt >corpus/b.txt
"$EMBER" tokenizer train corpus --ext .txt --vocab-size 1000 --out tok/small.tiktoken >train.log 2>&1 \
  || { cat train.log; fail "tokenizer train"; }
[ "$(wc -l <tok/small.tiktoken)" -eq 999 ] || fail "expected 999 ranks"
"$EMBER" tokenizer train corpus --ext .txt --vocab-size 1000 --out tok/again.tiktoken >/dev/null 2>&1
cmp -s tok/small.tiktoken tok/again.tiktoken || fail "training is not deterministic"
# Bad inputs: one line each, refused before any training, nothing written.
expect_error "tokenizer train: input 'nowhere' does not exist" "$EMBER" tokenizer train nowhere --out tok/x.tiktoken
touch a_file
expect_error "--out 'a_file/sub/x.tiktoken': '$PWD/a_file' is not a directory" \
  "$EMBER" tokenizer train corpus --ext .txt --vocab-size 300 --out a_file/sub/x.tiktoken
expect_error "--out '/proc/x.tiktoken': cannot create files in '/proc'" \
  "$EMBER" tokenizer train corpus --ext .txt --vocab-size 300 --out /proc/x.tiktoken
[ ! -e tok/x.tiktoken ] && [ ! -e tok/x.tiktoken.json ] || fail "a refused tokenizer train wrote its rank file"
"$EMBER" tokenizer encode --file tok/small.tiktoken <corpus/a.txt >small_ids.txt
"$EMBER" tokenizer decode --file tok/small.tiktoken <small_ids.txt | cmp -s - corpus/a.txt \
  || fail "trained tokenizer does not round-trip"

# prepare text reads a file in 4 MiB blocks: documents longer than that, one a single line and one
# with a run of newlines across the block's end, give tiktoken's ids for the whole file; shards are
# exactly --shard-tokens long (the last one excepted), uint32 with llm.c's version 7 as the
# manifest says. Both documents go through one prepare, each ending in the separator.
"$EMBER" prepare text long --tokenizer cl100k_base --out prep_long --val-fraction 1 --shard-tokens 300000 \
  --no-progress >/dev/null || fail "prepare text long"

# tiktoken's ids for mixed.txt under each preset, and for prepare text's documents.
"$PY" - "$HERE" "$DATA" prep_long "${PRESETS[@]}" <<'PY' \
  || fail "prepare text long: ids differ from tiktoken on the whole files (or the reference failed)"
import glob, json, sys
import numpy as np
here, data, out, *presets = sys.argv[1:]
sys.path.insert(0, here)
from tokenizer_reference import encoding
encodings = {name: encoding(data, name) for name in presets}
text = open("mixed.txt", encoding="utf-8", newline="").read()
for name, enc in encodings.items():
    with open(f"ref_{name}.txt", "w") as f:
        f.write(" ".join(map(str, enc.encode_ordinary(text))) + "\n")
m = json.load(open(f"{out}/manifest.json"))
assert m["dtype"] == "uint32", m["dtype"]
shards = sorted(glob.glob(f"{out}/val_*.bin"))
got = []
for i, f in enumerate(shards):
    header = np.fromfile(f, dtype=np.int32, count=256)
    assert header[0] == 20240801 and header[1] == 7, (f, header[:3])
    toks = np.fromfile(f, dtype=np.uint32, offset=1024)
    assert len(toks) == header[2] and (i == len(shards) - 1 or len(toks) == 300000), (f, len(toks))
    got += toks.tolist()
sources = [s["path"] for s in m["sources"]]
assert sorted(sources) == ["long/line.txt", "long/runs.txt"], sources
want = []
for src in sources:  # each document whole, then the separator
    want += encodings["cl100k_base"].encode_ordinary(open(src, encoding="utf-8", newline="").read()) + [m["separator"]]
assert got == want, (len(got), len(want), next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), None))
PY
for enc in "${PRESETS[@]}"; do
  cmp -s "ref_$enc.txt" "ours_$enc.txt" || fail "$enc: ids differ from tiktoken on mixed.txt"
done

expect_error "unknown preset 'gpt9'" "$EMBER" tokenizer encode --preset gpt9 </dev/null
echo "50257" >big_id.txt
expect_error "token id 50257 is not in the vocabulary" "$EMBER" tokenizer decode --preset r50k_base <big_id.txt
echo "1 x 2" >junk.txt
expect_error "expected token ids" "$EMBER" tokenizer decode --preset r50k_base <junk.txt
# A copy of the binary elsewhere, with an empty $EMBER_TOKENIZER_DIR and HOME, names every place it
# looked.
mkdir -p none moved/bin
ln "$EMBER" moved/bin/ember 2>/dev/null || cp "$EMBER" moved/bin/ember
EMBER_TOKENIZER_DIR="$SCRATCH/none" HOME="$SCRATCH/home" \
  expect_error "not found in $SCRATCH/none (\$EMBER_TOKENIZER_DIR), $SCRATCH/moved/share/ember/tokenizers (relative to the binary)" \
  env -u XDG_CACHE_HOME moved/bin/ember tokenizer encode --preset cl100k_base </dev/null
grep -qF "$SCRATCH/home/.cache/ember/tokenizers (the user cache, \$HOME/.cache)" err.txt || fail "the error does not name the user cache"
echo "OK"
