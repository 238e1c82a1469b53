#!/usr/bin/env bash
# Tokenizer encode throughput, ember vs Python tiktoken, one thread each, on the same text.
#   bash bench/tokenizer_throughput.sh [build-dir] [MB]
# Texts: English prose (the Python docs' reStructuredText, python3.11-doc) and the mixed text of
# the differential test (prose, code, many scripts, whitespace runs). Rank files and regexes come
# from third_party/tokenizers (or $EMBER_TOKENIZER_DATA).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
mb="${2:-5}"
data="${EMBER_TOKENIZER_DATA:-$here/third_party/tokenizers}"
[ -f "$data/encodings.json" ] || { echo "tokenizer data folder $data is missing (it ships in third_party/tokenizers)" >&2; exit 1; }
py="${EMBER_PYTHON:-$HOME/.cache/ember/venv/bin/python}"
ref="$here/tests/integration/tokenizer_reference.py"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
find /usr/share/doc/python3.11/html/_sources -name '*.txt' | sort | xargs cat 2>/dev/null | head -c "$((mb * 1000000))" >"$tmp/prose.txt" || true
"$py" "$ref" text "$tmp/mixed.txt" "$mb" 1
echo "| text | encoding | ember MB/s | tiktoken MB/s | ember / tiktoken |"
echo "|---|---|---|---|---|"
for text in prose mixed; do
  for enc in r50k_base cl100k_base o200k_base llama3; do
    ours=$(EMBER_TOKENIZER_DIR="$data" "$build/tools/ember" tokenizer encode --preset "$enc" --stats \
             <"$tmp/$text.txt" 2>&1 >/dev/null | sed -E 's/.*: ([0-9.]+) MB\/s/\1/')
    theirs=$("$py" "$ref" bench "$data" "$enc" "$tmp/$text.txt")
    echo "| $text | $enc | $ours | $theirs | $(awk "BEGIN{printf \"%.2fx\", $ours/$theirs}") |"
  done
done
