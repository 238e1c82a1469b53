#!/usr/bin/env bash
# Preparing a Parquet corpus: `ember prepare text` in one process (2 encoding threads), in 2 parts
# run side by side (1 thread each, as 2 jobs of a Slurm array would) and then merged, against
# Python reading the same files with pyarrow and encoding with tiktoken on 2 threads
# (bench/prepare_reference.py). Rounds alternate the three (ABCABC...); tokens/s of each round
# from the wall time of its commands (start-up and writing included); the token counts must agree.
# Corpus: the Python docs and the Linux kernel's documentation (~50 MB) as 4 Parquet files.
# Usage: bench/run_prepare.sh [BUILD_DIR] [ROUNDS] [TOKENIZER]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
rounds="${2:-5}"
enc="${3:-cl100k_base}"
ember="$build/tools/ember"
py="${EMBER_PYTHON:-$HOME/.cache/ember/venv/bin/python}"
data="${EMBER_TOKENIZER_DATA:-$here/third_party/tokenizers}"
[ -x "$ember" ] || { echo "run_prepare: $ember not built" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
"$py" "$here/bench/prepare_reference.py" corpus corpus 4 >&2
now() { date +%s.%N; }
elapsed() { awk "BEGIN { printf \"%.3f\", $2 - $1 }"; }
tokens_of() { "$py" -c "import json,sys; m=json.load(open(sys.argv[1])); print(m['train_tokens']+m['val_tokens'])" "$1"; }
prep() { "$ember" prepare text corpus --tokenizer "$enc" --no-progress "$@" >/dev/null; }
for r in $(seq 1 "$rounds"); do
  rm -rf one p1 p2 merged py.bin
  t0=$(now); prep --out one --threads 2; t1=$(now)
  echo "{\"round\": $r, \"who\": \"ember, 1 process\", \"s\": $(elapsed "$t0" "$t1"), \"tokens\": $(tokens_of one/manifest.json)}"
  t0=$(now)
  prep --out p1 --threads 1 --part 1/2 & a=$!
  prep --out p2 --threads 1 --part 2/2 & b=$!
  wait $a; wait $b
  "$ember" prepare merge p1 p2 --out merged --no-progress >/dev/null
  t1=$(now)
  cmp -s one/manifest.json merged/manifest.json || { echo "run_prepare: the merged parts differ from one process" >&2; exit 1; }
  echo "{\"round\": $r, \"who\": \"ember, 2 parts + merge\", \"s\": $(elapsed "$t0" "$t1"), \"tokens\": $(tokens_of merged/manifest.json)}"
  t0=$(now); n=$("$py" "$here/bench/prepare_reference.py" encode "$data" "$enc" py.bin 2 corpus/*.parquet); t1=$(now)
  echo "{\"round\": $r, \"who\": \"Python pyarrow + tiktoken\", \"s\": $(elapsed "$t0" "$t1"), \"tokens\": $n}"
done | tee runs.jsonl >&2
"$py" - runs.jsonl "$(du -sb corpus | cut -f1)" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
who = list(dict.fromkeys(r["who"] for r in rows))
counts = {r["tokens"] for r in rows}
assert len(counts) == 1, f"token counts differ: {counts}"
tokens = counts.pop()
print(f"{tokens} tokens from {int(sys.argv[2]) / 1e6:.1f} MB of Parquet, {len(rows) // len(who)} rounds\n")
print("| who | tokens/s, median (min-max) | / Python, per round |")
print("|---|---|---|")
py = [tokens / r["s"] for r in rows if r["who"] == who[-1]]
for w in who:
    rate = [tokens / r["s"] for r in rows if r["who"] == w]
    ratio = [a / b for a, b in zip(rate, py)]
    print(f"| {w} | {statistics.median(rate) / 1e6:.2f} M ({min(rate) / 1e6:.2f}-{max(rate) / 1e6:.2f}) "
          f"| {statistics.median(ratio):.2f}x ({', '.join(f'{x:.2f}' for x in ratio)}) |")
PY
