# Shared helpers for the CLI tests: $1 = ember binary, $2 = scratch directory.
set -euo pipefail
# A test that fails half-way leaves no trainer running in the background: TERM first (a launcher
# forwards it to its ranks), then KILL.
cleanup_jobs() {
  local pids; pids=$(jobs -p)
  [ -z "$pids" ] && return 0
  kill -TERM $pids 2>/dev/null || true
  sleep 1
  kill -KILL $pids 2>/dev/null || true
}
trap cleanup_jobs EXIT
EMBER="$1"
SCRATCH="$2"
PY="${EMBER_PYTHON:-python3}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"
cd "$SCRATCH"

fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_error "<substring>" cmd...: the command must exit non-zero with exactly one line on
# stderr containing the substring.
expect_error() {
  local want="$1"; shift
  local rc=0
  "$@" >out.txt 2>err.txt || rc=$?
  [ "$rc" -ne 0 ] || fail "expected failure: $*"
  [ "$(wc -l <err.txt)" -eq 1 ] || { cat err.txt >&2; fail "expected one line on stderr: $*"; }
  grep -qF -- "$want" err.txt || { cat err.txt >&2; fail "stderr lacks '$want': $*"; }
}

# Synthetic corpus: a noisy successor chain over V tokens, written in the llm.c shard format by
# an independent (numpy) writer.
make_synthetic() {  # dir vocab train_tokens val_tokens
  "$PY" "$HERE/make_synthetic.py" "$@"
}

write_tiny_config() {  # file data_dir
  cat >"$1" <<YAML
model: {vocab_size: 64, d_model: 64, n_layers: 2, n_heads: 4, max_seq_len: 64, mlp: {d_ff: 128}}
data: {train: [$2/train_*.bin], val: [$2/val_*.bin]}
train: {steps: 60, micro_batch: 8, seq_len: 32, seed: 5, threads: 2}
optim: {lr: 3.0e-3, min_lr: 3.0e-4, warmup_steps: 10}
eval: {every: 20, batches: 4}
checkpoint: {every: 20, keep: 5}
log: {dir: runs, name: tiny, every: 5}
YAML
}
