# A run is usable from any directory: train in one, then from another evaluate, analyse, export and
# resume it; a task needs no shard at all; a moved data set is accepted through EMBER_DATA_DIR when
# its manifest is the recorded one and refused otherwise; a run written before data.json (relative
# paths) is found from above its directory; `export hf --out /proc/x` fails cleanly.
source "$(dirname "$0")/lib_common.sh"
mkdir -p proj/docs other_docs elsewhere
"$PY" - <<'PY'
import random
random.seed(3)
words = "the cat sat on a mat while my dog ran in the park and a bird sang".split()
for i in range(12):
    open(f"proj/docs/d{i:02d}.txt", "w").write(" ".join(random.choice(words) for _ in range(300)) + "\n")
    open(f"other_docs/o{i:02d}.txt", "w").write(f"another corpus, document {i}: " + "xyz " * 200 + "\n")
PY
cat >task.jsonl <<'JSONL'
{"context": "the cat sat on the", "endings": ["mat", "park"], "label": 0}
{"context": "my dog ran in the", "endings": ["mat", "park"], "label": 1}
JSONL
printf 'the cat sat on a mat while my dog ran in the park\n' >notes.txt
cd proj
"$EMBER" prepare bytes docs --out data --val-fraction 0.3 >/dev/null || fail "prepare"
write_tiny_config r.yaml data
"$EMBER" train -c r.yaml --set model.vocab_size=256 --set train.steps=4 --set optim.warmup_steps=1 \
  --set checkpoint.every=4 >train.out 2>&1 \
  || { cat train.out >&2; fail "training failed"; }
P="$SCRATCH/proj" RUN="$SCRATCH/proj/runs/tiny"
grep -qF "$P/data/train_*.bin" "$RUN/config.yaml" && grep -qF "$P/data/val_*.bin" "$RUN/config.yaml" \
  || { cat "$RUN/config.yaml" >&2; fail "config.yaml does not record the data paths absolute"; }
"$PY" - "$RUN/data.json" "$P/data/manifest.json" <<'PY' || fail "data.json does not record the manifest's sha256"
import hashlib, json, sys
r, want = json.load(open(sys.argv[1])), hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest()
assert r["train"]["manifest_sha256"] == r["val"]["manifest_sha256"] == want, r
assert r["train"]["dir"] == sys.argv[2].rsplit("/", 1)[0] and r["tokenizer"] == {"tokenizer": "bytes"}, r
PY
"$EMBER" eval runs/tiny --batches 2 --json >"$SCRATCH/here.json" || fail "eval in the run's own directory"

# From another directory, every subcommand that reads the run.
cd "$SCRATCH/elsewhere"
# With --buckets, which also finds the training shards' counts from here (the loss is the same
# with or without the buckets: cli.eval_inspect).
"$EMBER" eval "$RUN" --batches 2 --buckets --json >there.json 2>/dev/null || fail "eval --buckets from another directory"
"$PY" - "$SCRATCH/here.json" <<'PY' || fail "eval from elsewhere differs from eval in place"
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open("there.json"))
assert a["loss"] == b["loss"] and a["tokens"] == b["tokens"] == 2 * 8 * 32, (a, b)
assert sum(x["tokens"] for x in b["buckets"]) == b["tokens"], b
PY
"$EMBER" analyze alignment --ckpt "$RUN" --data ../notes.txt --batches 1 --batch-size 1 --json >/dev/null \
  || fail "analyze alignment of a text file from elsewhere"
"$EMBER" capacity "$RUN" --json >cap.json || fail "capacity from elsewhere"
"$EMBER" generate "$RUN" --prompt 'the ' --tokens 4 --temperature 0 --json >gen.json || fail "generate from elsewhere"
"$EMBER" inspect "$RUN/config.yaml" >/dev/null || fail "inspect of the run's config from elsewhere"
"$EMBER" report "$RUN" >report.txt || fail "report from elsewhere"
"$EMBER" export hf "$RUN" --out exp >/dev/null || fail "export hf from elsewhere"
[ -f exp/tokenizer.json ] || fail "export hf from elsewhere lost the run's tokenizer"
# An unwritable target names the path and the reason, exits non-zero, and leaves nothing.
expect_error "export hf: cannot create '/proc/x'" "$EMBER" export hf "$RUN" --out /proc/x
[ ! -e /proc/x ] && [ ! -e /proc/.x.partial ] || fail "export hf left something in /proc"

# The data set moved away entirely: a task and generation need no shard; perplexity and the
# frequency buckets say what they need and where they looked.
mv "$P/data" "$SCRATCH/moved"
"$EMBER" eval "$RUN" --task choice ../task.jsonl --json >task.json || fail "eval --task needs no shard"
grep -q '"items":2' task.json || fail "eval --task scored the wrong items"
"$EMBER" generate "$RUN" --prompt 'the ' --tokens 4 --temperature 0 --json >gen_moved.json || fail "generate without data"
cmp -s gen.json gen_moved.json || fail "generate without the data set differs"
expect_error "eval: perplexity without --data needs the validation shards (data.val: '$P/data/val_*.bin'): not found as written" \
  "$EMBER" eval "$RUN"
grep -qF "set EMBER_DATA_DIR to the directory that holds it now" err.txt \
  || { cat err.txt >&2; fail "the error does not say to set EMBER_DATA_DIR"; }
expect_error "eval --buckets: frequency buckets need the training shards (data.train: '$P/data/train_*.bin')" \
  "$EMBER" eval "$RUN" --buckets --batches 1 --data "$SCRATCH/moved/val_*.bin"

# Pointed at the moved copy (same manifest): the same numbers. Another data set is refused.
EMBER_DATA_DIR="$SCRATCH/moved" "$EMBER" eval "$RUN" --batches 2 --json >moved.json 2>moved.err \
  || { cat moved.err >&2; fail "eval with EMBER_DATA_DIR"; }
"$PY" - <<'PY' || fail "eval of the moved data set differs"
import json
a, b = json.load(open("there.json")), json.load(open("moved.json"))
assert a["loss"] == b["loss"] and a["tokens"] == b["tokens"], (a, b)
PY
"$EMBER" prepare bytes ../other_docs --out ../other --val-fraction 0.3 >/dev/null || fail "prepare the other set"
other_sha=$(sha256sum ../other/manifest.json | cut -c1-12) run_sha=$(sha256sum ../moved/manifest.json | cut -c1-12)
expect_error "EMBER_DATA_DIR '$SCRATCH/other' holds another data set (manifest sha256 $other_sha) than the run was trained on, '$P/data' (manifest sha256 $run_sha)" \
  env EMBER_DATA_DIR="$SCRATCH/other" "$EMBER" eval "$RUN"
# A resume from elsewhere with the moved data continues and records the new place.
EMBER_DATA_DIR="$SCRATCH/moved" "$EMBER" train --resume --run-dir "$RUN" --set train.steps=6 >resume.out 2>&1 \
  || { cat resume.out >&2; fail "resume with the moved data set"; }
grep -qF "$SCRATCH/moved/train_*.bin" "$RUN/config.yaml" || fail "the resumed run does not record the new data place"
[ -d "$RUN/checkpoints/step_6" ] || fail "the resume did not train"

# A run from before data.json: relative paths work from the original directory and from elsewhere
# (above the run directory); gone, the error lists where it looked.
mv "$SCRATCH/moved" "$P/data"
cp -r "$RUN" "$P/runs/old" && rm "$P/runs/old/data.json"
sed -i "s|$P/data/|data/|; s|$SCRATCH/moved/|data/|" "$P/runs/old/config.yaml"
grep -qF "[data/val_*.bin]" "$P/runs/old/config.yaml" || { cat "$P/runs/old/config.yaml" >&2; fail "old-style config"; }
(cd "$P" && "$EMBER" eval runs/old --batches 1 --json >/dev/null) || fail "an old run from its own directory"
"$EMBER" eval "$P/runs/old" --batches 1 --json >/dev/null || fail "an old run from elsewhere"
mv "$P/data" "$SCRATCH/gone"
expect_error "nor from the directories above the run: '$P/runs', '$P', '$SCRATCH'" "$EMBER" eval "$P/runs/old"
echo "a run works from any directory; a moved data set is recognised by its manifest"
