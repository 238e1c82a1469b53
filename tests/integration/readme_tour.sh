# README.md's quick tour runs as printed, after the demo: every line of its ```bash block, with
# `ember` this build's binary and each training run cut to a few steps (the only change), in a
# folder holding what scripts/demo.sh leaves (data/pydoc, runs/tiny). A line that fails, or a
# tour with fewer than 8 commands, fails the test.
source "$(dirname "$0")/lib_common.sh"
README="$EMBER_SOURCE_DIR/README.md"
# A part of the demo's corpus, for time, with 1% of its documents for validation (not the default 5%):
# the tour's `ember eval --batches 0` reads the whole split (~300k tokens at 5%, 23 s on 2 busy cores).
LIBRARY_DOCS=/usr/share/doc/python3.11/html/_sources/library
[ -d "$LIBRARY_DOCS" ] || fail "$LIBRARY_DOCS is missing (install python3.11-doc: scripts/setup.sh does)"
"$EMBER" prepare bytes "$LIBRARY_DOCS" --out data/pydoc --val-fraction 0.01 >prepare.out 2>&1 || { cat prepare.out >&2; fail "prepare"; }
# 2 steps: a warm-up step and a decayed one, a checkpoint and the final evaluation, all a command
# of the tour needs (6 had cost the Titans line 4 s).
SHORT=(--set train.steps=2 --set optim.warmup_steps=1 --set eval.every=0 --set eval.batches=2 --set checkpoint.every=2)
"$EMBER" train -c "$EMBER_SOURCE_DIR/configs/tiny.yaml" "${SHORT[@]}" >demo.out 2>&1 || { cat demo.out >&2; fail "the demo's run"; }
ln -s "$EMBER_SOURCE_DIR/configs" configs
"$PY" - "$README" >tour.txt <<'PY' || fail "README.md has no quick tour block"
import re, sys
text = open(sys.argv[1]).read()
block = re.search(r"## A quick tour\n.*?```bash\n(.*?)```", text, re.S)
assert block, "no ```bash block under '## A quick tour'"
for line in block.group(1).splitlines():
    command = line.split("  #")[0].strip()
    if command:
        print(command)
PY
[ "$(wc -l <tour.txt)" -ge 8 ] || fail "the quick tour has $(wc -l <tour.txt) commands, expected at least 8"
n=0
while IFS= read -r line; do
  n=$((n + 1))
  args=()
  eval "args=($line)"  # the README's own quoting
  for i in "${!args[@]}"; do [ "${args[$i]}" = ember ] && args[$i]="$EMBER"; done
  case " $line " in *" train "*) [[ " $line " == *" --resume "* ]] || args+=("${SHORT[@]}") ;; esac
  "${args[@]}" >"tour_$n.out" 2>"tour_$n.err" </dev/null || { cat "tour_$n.err" >&2; fail "README tour line $n: $line"; }
done <tour.txt
echo "the README's quick tour ran: $n commands"
