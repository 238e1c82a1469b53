# ember eval --task: a byte-level model trained on three sentences, repeated, must pick the right
# ending of each (accuracy 1, raw and normalised), get every final word greedily (LAMBADA accuracy
# 1), and score a flipped-label set at 0; bad task input fails with the file and line named.
# ember prepare lambada builds items from the same corpus that the model then gets right.
source "$(dirname "$0")/lib_common.sh"
mkdir -p corpus
"$PY" - <<'PY'
import random
random.seed(3)
sentences = ["the cat sat on the mat.", "a dog ran in the park.", "my bird sang a song."]
for d in range(12):
    with open(f"corpus/doc{d:02d}.txt", "w") as f:
        f.write(" ".join(random.choice(sentences) for _ in range(400)) + "\n")
PY
"$EMBER" prepare bytes corpus --out data --val-fraction 0.2 >/dev/null 2>&1 || fail "prepare failed"
# 175 steps: every check below passes from about 135 (at 120 the LAMBADA perplexity is 1.70 > 1.5);
# measured at 175: LAMBADA perplexity 1.07, built items 0.90 (at 250: 1.02 and 0.87).
cat >tiny.yaml <<'YAML'
model: {vocab_size: 256, d_model: 64, n_layers: 2, n_heads: 4, max_seq_len: 64, mlp: {d_ff: 128}}
data: {train: [data/train_*.bin], val: [data/val_*.bin]}
train: {steps: 175, micro_batch: 16, seq_len: 48, seed: 5, threads: 2}
optim: {lr: 3.0e-3, min_lr: 3.0e-4, warmup_steps: 20}
eval: {every: 175, batches: 4}
checkpoint: {every: 175, keep: 1}
log: {dir: runs, name: sentences, every: 50}
YAML
"$EMBER" train -c tiny.yaml >train.out 2>train.err || { cat train.err >&2; fail "training failed"; }
cat >choice.jsonl <<'JSONL'
{"context": "the cat sat on the", "endings": ["mat.", "park.", "song."], "label": 0}
{"context": "a dog ran in the", "endings": ["mat.", "park.", "song."], "label": 1}
{"context": "my bird sang a", "endings": ["mat.", "park.", "song."], "label": 2}
{"ctx": "the cat sat on", "choices": ["the mat.", "a song."], "label": "0"}
JSONL
"$EMBER" eval runs/sentences --task choice choice.jsonl --json >choice.json || fail "choice task failed"
"$PY" - <<'PY' || { cat choice.json >&2; fail "the trained model missed a choice"; }
import json
r = json.load(open("choice.json"))
assert r["task"] == "choice" and r["items"] == 4 and r["accuracy"] == 1.0 and r["accuracy_norm"] == 1.0, r
PY
sed -e 's/"label": 0}/"label": X}/' -e 's/"label": 1}/"label": 0}/' -e 's/"label": X}/"label": 1}/' choice.jsonl \
  | head -2 >flipped.jsonl
"$EMBER" eval runs/sentences --task choice flipped.jsonl --json | grep -q '"accuracy":0.0' \
  || fail "wrong labels were not scored wrong"
printf '%s\n' '{"text": "the cat sat on the mat."}' '{"text": "a dog ran in the park."}' '{"text": "my bird sang a song."}' \
  >lambada.jsonl
"$EMBER" eval runs/sentences --task lambada lambada.jsonl --json >lambada.json || fail "lambada task failed"
"$PY" - <<'PY' || { cat lambada.json >&2; fail "the trained model missed a final word"; }
import json
r = json.load(open("lambada.json"))
assert r["task"] == "lambada" and r["items"] == 3 and r["accuracy"] == 1.0 and 1.0 <= r["perplexity"] < 1.5, r
PY
"$EMBER" eval runs/sentences --task lambada lambada.jsonl --limit 1 | grep -q "over 1 items" || fail "--limit ignored"
printf '%s\n' 'the cat sat on the song.' >wrong.txt
"$EMBER" eval runs/sentences --task lambada wrong.txt --json | grep -q '"accuracy":0.0' || fail "a wrong word was accepted"
printf '{"context": "x", "endings": ["a", "b"], "label": 5}\n' >bad.jsonl
expect_error "bad.jsonl:1: label 5 is not an index of its 2 endings" "$EMBER" eval runs/sentences --task choice bad.jsonl
expect_error "--task 'quiz' is unknown" "$EMBER" eval runs/sentences --task quiz bad.jsonl
expect_error "task file 'none.jsonl' not found" "$EMBER" eval runs/sentences --task lambada none.jsonl
# ember prepare lambada builds such items from the corpus: passages ending in a word used before.
"$EMBER" prepare lambada corpus --out built.jsonl --limit 30 >built.out || fail "prepare lambada failed"
grep -q "^30 passages from 12 file(s)" built.out || { cat built.out >&2; fail "prepare lambada: not 30 passages"; }
"$EMBER" eval runs/sentences --task lambada built.jsonl --json >built.json || fail "lambada on built items failed"
"$PY" - <<'PY' || { cat built.json >&2; fail "built LAMBADA items"; }
import json
r = json.load(open("built.json"))
items = [json.loads(line) for line in open("built.jsonl")]
assert len(items) == 30 and all(i["target"] in ("mat", "park", "song") for i in items), items[:3]
assert all(i["text"].endswith(" " + i["target"]) and 50 <= len(i["text"].split()) <= 150 for i in items), items[:3]
assert all(i["text"][: -len(i["target"])].count(i["target"]) >= 1 for i in items), items[:3]
# Not 1: these contexts fill the model's 64 positions, and it trained on windows of 48 (measured 0.90;
# guessing every byte of a word greedily by chance is ~0).
assert r["items"] == 30 and r["accuracy"] >= 0.75, r
PY
# --min-words / --max-words bound the passages; --any-final-word also keeps final words new to the
# context (the default never does).
"$EMBER" prepare lambada corpus --out short_p.jsonl --min-words 20 --max-words 40 >/dev/null || fail "--min/--max-words"
"$EMBER" prepare lambada corpus --out any.jsonl --any-final-word >/dev/null || fail "--any-final-word"
"$EMBER" prepare lambada corpus --out all.jsonl >/dev/null || fail "prepare lambada without --limit"
"$PY" - <<'PY' || fail "prepare lambada's options"
import json
load = lambda f: [json.loads(line) for line in open(f)]
new_word = lambda i: i["text"][: -len(i["target"])].count(i["target"]) == 0
short, anyw, default = load("short_p.jsonl"), load("any.jsonl"), load("all.jsonl")
assert short and all(20 <= len(i["text"].split()) <= 40 for i in short), short[:2]
assert min(len(i["text"].split()) for i in short) < 50
assert not any(new_word(i) for i in default) and any(new_word(i) for i in anyw), len(anyw)
PY
printf 'A short note. Nothing more.\n' >short.txt
expect_error "no passage of 50-150 words in 1 file(s)" "$EMBER" prepare lambada short.txt --out none.jsonl
[ ! -e none.jsonl ] || fail "a failed prepare lambada wrote its output"
echo "tasks OK"
