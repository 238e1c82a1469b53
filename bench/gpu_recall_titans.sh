#!/usr/bin/env bash
# Titans (LMM) on the associative-recall task (configs/recall.yaml, docs/mixers.md "Associative
# recall") on a GPU machine: on the CPU it stays at chance at its defaults, and its best settings so
# far (retrieval before, theta_max 8, no inner clip, with or without the memory's residual) reach
# 0.21-0.55 in 1,000-3,000 steps, varying with the seed; whether it needs more steps, more seeds'
# luck or another set-up is open. This trains a grid of LMM settings for up
# to STEPS steps, all at once on the one GPU (launch-bound runs of a 2-layer d 64 model), with
# attention and the default LMM at the CPU test's budgets as references, and prints each run's
# held-out recall (chance 1/16) and the step it reached. Build as bench/gpu_check.sh does (carry
# .deps/debs); a run still going at the deadline is stopped (ember checkpoints on SIGTERM) and scored.
# Usage: [STEPS=4000] [EMBER_GPU_DEADLINE_S=330] bash bench/gpu_recall_titans.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
steps="${STEPS:-4000}"
deadline=$((SECONDS + ${EMBER_GPU_DEADLINE_S:-330}))
out="${OUT:-$(mktemp -d)}"
bash "$here/bench/gpu_check.sh" --build-only "$here/build-gpu" >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
grep -E "^build:|^ember " "$out/build.log"
[ -d "$here/.deps/prefix" ] && export LD_LIBRARY_PATH="$here/.deps/prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ember="$here/build-gpu/tools/ember"
work="$(mktemp -d)" && cd "$work"
"$ember" prepare recall --out data --sequences 16000 --val-sequences 256 --task-items 256 >/dev/null
lmm=(-c "$here/configs/mixers/titans.yaml")
nr=(${lmm[*]} --set model.mixer.titans.retrieval=before --set model.mixer.titans.inner_grad_clip=0
  --set model.mixer.titans.memory_residual=false)  # the CPU's best leads (docs/mixers.md), theta_max below
grid=(  # name steps overrides...
  "attention 800 -c $here/configs/mixers/attention.yaml"
  "lmm_default 1000 ${lmm[*]}"
  "lmm_default_long $steps ${lmm[*]}"
  "lmm_before_theta8_noclip $steps ${lmm[*]} --set model.mixer.titans.retrieval=before --set model.mixer.titans.theta_max=8 --set model.mixer.titans.inner_grad_clip=0"
  "lmm_noresid_theta8 $steps ${nr[*]} --set model.mixer.titans.theta_max=8"
  "lmm_noresid_theta8_seed2 $steps ${nr[*]} --set model.mixer.titans.theta_max=8 --set train.seed=2"
  "lmm_noresid_theta8_seed3 $steps ${nr[*]} --set model.mixer.titans.theta_max=8 --set train.seed=3"
  "lmm_noresid_theta4 $steps ${nr[*]} --set model.mixer.titans.theta_max=4"
  "lmm_noresid_theta8_batch128 $steps ${nr[*]} --set model.mixer.titans.theta_max=8 --set train.micro_batch=128"
  "lmm_noresid_theta16_heads2 $steps ${nr[*]} --set model.mixer.titans.theta_max=16 --set model.n_heads=2"
  "lmm_noresid_theta8_4layers $steps ${nr[*]} --set model.mixer.titans.theta_max=8 --set model.n_layers=4"
  "lmm_noresid_theta8_clip1 $steps ${nr[*]} --set model.mixer.titans.theta_max=8 --set model.mixer.titans.inner_grad_clip=1"
  "lmm_normalized_theta1 $steps ${nr[*]} --set model.mixer.titans.memory_residual=true --set model.mixer.titans.inner_step=normalized --set model.mixer.titans.theta_max=1"
  "lmm_normalized_theta1_chunk1 $steps ${nr[*]} --set model.mixer.titans.memory_residual=true --set model.mixer.titans.inner_step=normalized --set model.mixer.titans.theta_max=1 --set model.mixer.titans.chunk_size=1"
)
left=$((deadline - SECONDS - 40))  # the rest is for scoring
for row in "${grid[@]}"; do
  read -r name n rest <<<"$row"
  # shellcheck disable=SC2086
  timeout -k 20 "$left" "$ember" train -c "$here/configs/recall.yaml" --set 'data.train=[data/train_*.bin]' \
    --set 'data.val=[data/val_*.bin]' --set train.device=cuda --set train.threads=1 --set train.steps="$n" \
    --set log.dir=runs --set log.name="$name" --set log.every=250 --set checkpoint.every=1000 $rest >"$name.out" 2>&1 &
done
wait || true
for row in "${grid[@]}"; do  # scored on the CPU, all at once
  read -r name _ <<<"$row"
  "$ember" eval "runs/$name" --device cpu --task recall data/recall_task.jsonl --json >"$name.eval.json" 2>"$name.eval.err" &
done
wait
printf '%-32s %10s %8s\n' run step recall | tee "$out/recall_titans.txt"
for row in "${grid[@]}"; do
  read -r name n _ <<<"$row"
  reached=$(grep -oE "step +[0-9]+/" "$name.out" | tail -1 | grep -oE "[0-9]+" || echo 0)
  acc=$(python3 -c "import json, sys; print(f\"{json.load(open(sys.argv[1]))['accuracy']:.3f}\")" "$name.eval.json" 2>/dev/null || echo "n/a")
  printf '%-32s %10s %8s\n' "$name" "$reached/$n" "$acc" | tee -a "$out/recall_titans.txt"
done
cp ./*.out ./*.err "$out/" 2>/dev/null || true
