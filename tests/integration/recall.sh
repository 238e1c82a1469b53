# A mixing test that can fail: associative recall (`ember prepare recall`, configs/recall.yaml), where
# an answer is predictable only from its key's earlier pair. A model that does not mix across
# positions (short_conv with kernel 1: each output sees its own token only) must stay near chance
# (1/16) on held-out sequences; attention, Hope-attention, Titans MAG, gated attention and Titans
# LMM must recall >= 90% of the answers within their budgets (gated attention at optim.lr 1e-3: at
# the config's 3e-3 it plateaus near 50% up to 2,000 steps, seeds 1-3). Titans LMM learns recall
# once its weights are drawn at 1/sqrt(d) rather than the config's 0.02: at d 128, init_std 0.088,
# the normalised inner step (theta_max 1) and reading before each write, seeds 1-3 recall
# 0.998-1.000 at 1,000 steps, and seeds 1-2 0.56 and 0.06 at 0.02 (experiments/mixers-cpu/README.md,
# "Associative recall"; the independent PyTorch DeltaNet in recall_reference.py depends on the scale of its
# q/k/v projections the same way).
source "$(dirname "$0")/lib_common.sh"
CONFIGS="$EMBER_SOURCE_DIR/configs"
"$EMBER" prepare recall --out data --sequences 16000 --val-sequences 256 --task-items 256 >prepare.out 2>&1 \
  || { cat prepare.out >&2; fail "prepare recall"; }
expect_error "--queries 5 must be between 1 and --pairs 4" "$EMBER" prepare recall --out bad --queries 5
[ ! -e bad ] || fail "a refused prepare left its output folder"
train_recall() {  # name steps stop_after overrides...: trains, or with overrides empty resumes, to stop_after steps
  local name="$1" steps="$2" stop="$3"; shift 3
  if [ $# -eq 0 ]; then
    "$EMBER" train --resume --run-dir "runs/$name" --stop-after "$stop" >>"$name.out" 2>>"$name.err" \
      || { cat "$name.err" >&2; fail "resuming $name failed"; }
  else
    "$EMBER" train -c "$CONFIGS/recall.yaml" --set 'data.train=[data/train_*.bin]' --set 'data.val=[data/val_*.bin]' \
      --set train.threads=1 --set train.steps="$steps" --set log.name="$name" "$@" --stop-after "$stop" \
      >"$name.out" 2>"$name.err" || { cat "$name.err" >&2; fail "training $name failed"; }
  fi
}
recall_now() {  # name -> prints the recall accuracy of the run's newest checkpoint on data/recall_task.jsonl
  "$EMBER" eval "runs/$1" --task recall data/recall_task.jsonl --json >"$1.eval.json" \
    || fail "eval --task recall of $1 failed"
  "$PY" -c "import json; print(json.load(open('$1.eval.json'))['accuracy'])"
}
at_least() { "$PY" -c "import sys; sys.exit(0 if $1 >= $2 else 1)"; }
train_recall control 500 500 --set model.mixer.kind=short_conv --set model.mixer.short_conv.kernel=1
control=$(recall_now control)
echo "short_conv kernel 1 (no mixing), 500 steps: recall $control (chance 0.0625)"
at_least 0.15 "$control" || fail "a model that cannot mix recalled $control of the answers"
# check_kind kind steps first every floor [overrides...]: one run of `steps` steps (its learning-rate
# schedule is the whole budget's) must recall >= floor at one of its checkpoints: at step `first`,
# then every `every` steps, stopped (--stop-after) and resumed (--resume, the same run bit for bit:
# cli.resume) between them. A kind that recalls early spends no more of the suite's time; `first` is
# where the kind reached the floor on this machine (seed 1), and the budget is unchanged.
check_kind() {
  local kind="$1" steps="$2" first="$3" every="$4" floor="$5"; shift 5
  local at="$first" acc
  train_recall "$kind" "$steps" "$first" -c "$CONFIGS/mixers/$kind.yaml" "$@"
  while :; do
    acc=$(recall_now "$kind")
    echo "$kind, $at of $steps steps: recall $acc"
    at_least "$acc" "$floor" && return 0
    [ "$at" -lt "$steps" ] || fail "$kind recalled $acc of the answers after $steps steps, not >= $floor"
    train_recall "$kind" "$steps" "$every"
    at=$((at + every > steps ? steps : at + every))
  done
}
check_kind attention 800 800 100 0.9
check_kind hope_attention 700 500 100 0.9
check_kind titans_mag 1000 900 100 0.9
check_kind gated_attention 1000 600 100 0.9 --set optim.lr=1e-3 --set optim.min_lr=1e-4
check_kind titans 800 300 100 0.9 --set model.d_model=128 --set model.mlp.d_ff=256 --set model.init_std=0.088 \
  --set model.mixer.titans.inner_step=normalized --set model.mixer.titans.theta_max=1 \
  --set model.mixer.titans.retrieval=before --set model.mixer.titans.inner_grad_clip=0
echo '{"tokens": [1, 2]}' >bad_task.jsonl
expect_error "bad_task.jsonl:1: expected" "$EMBER" eval runs/attention --task recall bad_task.jsonl
