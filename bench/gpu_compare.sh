# Sourced by `bench/gpu_check.sh --compare` after its build (its helpers: say, budget, check, big_run,
# lev_overhead, random_tokens; its variables: here, py, ember, work, steps). Two comparisons on the GPU,
# in rounds whose order alternates (ABC then CBA) so that drifts hit every contender alike:
#   1. ember against Python at its best on the identical 1.2B tied model (configs/leviathan/1.2b.yaml
#      + tied.yaml: bf16, micro-batch 8 x 2048): bench/reference_train.py eager with fused AdamW, and
#      under torch.compile (compiled in its untimed warm-up);
#   2. LEV's step overhead against the untied head at 1.2B (untied, LEV; then LEV, untied).
#   EMBER_GPU_ROUNDS       rounds of each comparison (default 2)
#   EMBER_GPU_LEV_ROUNDS   rounds of the second (default EMBER_GPU_ROUNDS; 0 skips it)
#   EMBER_GPU_CONTENDERS   which of the first comparison's sides run (default "ember unfused separate atengate
#                          atennorm eager compile profile"): "ember" is kernels.* = auto (the on-device
#                          check's choices), "unfused" ember with its ATen loss-head pass (kernels.loss_head=aten),
#                          "separate" ember with one linear per projection weight (kernels.projections=aten),
#                          "atengate" ember with ATen's silu and mul for the SwiGLU gate (kernels.swiglu=aten),
#                          "atennorm" ember with ATen's add and rms_norm (kernels.norm=aten),
#                          "ondemand" (not in the default) ember reading each batch when the step asks for it
#                          (kernels.prefetch_batches=0: no thread, no pinned memory),
#                          so each fusion's gain is read in the same rounds; "profile" one more ember run
#                          with --profile 5:7 (the time by category, the trace gzipped into $OUT); with
#                          "tapered" also one run of configs/tapered/1.3b.yaml (4 x 4096)
rounds="${EMBER_GPU_ROUNDS:-2}"
lev_rounds="${EMBER_GPU_LEV_ROUNDS:-$rounds}"
contenders=" ${EMBER_GPU_CONTENDERS:-ember unfused separate atengate atennorm eager compile profile} "
big=(-c "$here/configs/leviathan/1.2b.yaml")

reference() {  # round mode: bench/reference_train.py on the GPU; its JSON line in $work/python_<mode>_r<round>.json
  local name="python_$2_r$1"
  timeout -s KILL "$(budget 240)" "$py" "$here/bench/reference_train.py" 200376 2048 16 16 5632 8 2048 10 bf16 "$2" cuda \
    >"$work/$name.json" 2>"$work/$name.out" || { tail -20 "$work/$name.out"; return 1; }
  cat "$work/$name.json"
}

python_table() {  # tokens/s per contender and round, and ember's ratio to each Python contender per round
  "$py" - "$work" "$rounds" <<'PY'
import json, os, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
def load(name):  # None: not run (not among EMBER_GPU_CONTENDERS); {}: it ran and failed
    p = os.path.join(work, name + ".json")
    return (json.load(open(p)) if os.path.getsize(p) else {}) if os.path.exists(p) else None
runs = {r: {"ember": load(f"tied_1.2b_r{r}"), "unfused": load(f"tied_unfused_1.2b_r{r}"),
            "separate": load(f"tied_separate_1.2b_r{r}"), "atengate": load(f"tied_atengate_1.2b_r{r}"),
            "atennorm": load(f"tied_atennorm_1.2b_r{r}"), "ondemand": load(f"tied_ondemand_1.2b_r{r}"),
            "eager": load(f"python_eager_r{r}"), "compile": load(f"python_compile_r{r}")}
        for r in range(1, rounds + 1)}
print("| round | ember tok/s (peak GiB) | ember, ATen loss pass | ember, separate projections | ember, ATen SwiGLU gate | ember, ATen norms | ember, batches on demand | python eager, fused AdamW | python torch.compile | ember / eager | ember / compile |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
ratios = {"eager": [], "compile": []}
for r, c in runs.items():
    cell = lambda x: "not run" if x is None else "failed" if not x else f"{x['tokens_per_s']:,.0f} ({x.get('peak_allocated_gib') or float('nan'):.1f})"
    row = [str(r), cell(c["ember"]), cell(c["unfused"]), cell(c["separate"]), cell(c["atengate"]), cell(c["atennorm"]), cell(c["ondemand"]),
           cell(c["eager"]),
           cell(c["compile"])]
    for k in ("eager", "compile"):
        ok = bool(c["ember"]) and bool(c[k])
        if ok: ratios[k].append(c["ember"]["tokens_per_s"] / c[k]["tokens_per_s"])
        row.append(f"{ratios[k][-1]:.2f}x" if ok else "n/a")
    print("| " + " | ".join(row) + " |")
params = {k: v["params"] for c in runs.values() for k, v in c.items() if v}
print("parameters:", params)
for k, v in ratios.items():
    if v: print(f"RESULT ember / python {k} at 1.2B tied, bf16 8 x 2048: median {statistics.median(v):.2f}x over {len(v)} round(s) ({', '.join(f'{x:.2f}' for x in v)})")
PY
}

fusion_off() {  # the key that turns the contender's fusion off; fails for the other contenders
  case "$1" in
    unfused) echo kernels.loss_head=aten ;;
    separate) echo kernels.projections=aten ;;
    atengate) echo kernels.swiglu=aten ;;
    atennorm) echo kernels.norm=aten ;;
    ondemand) echo kernels.prefetch_batches=0 ;;
    *) return 1 ;;
  esac
}

say "ember against Python (fused AdamW; torch.compile) at 1.2B tied, bf16, 8 x 2048: $rounds rounds"
for r in $(seq 1 "$rounds"); do
  order=(ember unfused separate atengate atennorm ondemand eager compile)
  ((r % 2 == 0)) && order=(compile eager ondemand atennorm atengate separate unfused ember)
  for c in "${order[@]}"; do
    [[ "$contenders" == *" $c "* ]] || continue
    if [ "$c" = ember ]; then check big_run "tied_1.2b_r$r" 200376 "${big[@]}" -c "$here/configs/leviathan/tied.yaml"
    elif key=$(fusion_off "$c"); then  # ember with that one fusion off
      check big_run "tied_${c}_1.2b_r$r" 200376 "${big[@]}" -c "$here/configs/leviathan/tied.yaml" --set "$key"
    else check reference "$r" "$c"; fi
  done
done
check python_table
if [[ "$contenders" == *" profile "* ]]; then
  say "ember at 1.2B tied with --profile 5:7: time by category"
  check big_run tied_1.2b_profile 200376 "${big[@]}" -c "$here/configs/leviathan/tied.yaml" --profile 5:7
fi
if [[ "$contenders" == *" tapered "* ]]; then
  say "configs/tapered/1.3b.yaml: $steps bf16 steps, micro-batch 4 x 4096"
  check big_run tapered_1.3b 128256 -c "$here/configs/tapered/1.3b.yaml"
fi

((lev_rounds > 0)) && say "LEV's step overhead against the untied head at 1.2B: $lev_rounds rounds"
for r in $(seq 1 "$lev_rounds"); do
  order=(untied lev); ((r % 2 == 0)) && order=(lev untied)
  for e in "${order[@]}"; do check big_run "${e}_1.2b_r$r" 200376 "${big[@]}" -c "$here/configs/leviathan/$e.yaml"; done
  check lev_overhead "untied_1.2b_r$r" "lev_1.2b_r$r"
done
