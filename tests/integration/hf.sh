# ember export hf / ember import hf / ember tokenizer hf against the `transformers`, `tokenizers` and
# `tiktoken` packages of the venv (independent implementations):
# - a trained tiny run of every embedding kind (and tapered + gated attention through
#   modeling_ember.py), exported, loaded by transformers: logits equal ember's (ember eval --logits)
#   within fp32 tolerance and the loss equals ember eval's; sharded and bf16 exports load too;
# - a random LlamaForCausalLM (GQA, untied head) saved by transformers (fp32, fp16, sharded),
#   imported: ember's logits equal transformers'; eval, capacity and continued training run on it;
# - export -> import is bit-identical for the parameters;
# - tokenizer.json encodes like tiktoken on mixed text for every preset, and bytes for byte-level;
#   tokenizer hf --bytes (with --max-length) and --file (a trained rank file) encode as ember does;
# - bad input: one-line errors and nothing written.
source "$(dirname "$0")/lib_common.sh"
REF="$HERE/hf_reference.py"
# transformers' side runs in one process (hf_reference.py serve), not one a check: importing it takes
# ~3 s. It starts first and runs the commands queued with `check` as they come, beside ember's: the
# models to import first, then the checks of what ember wrote. `ref_sync` waits for all queued so far
# (before the imports of those models, and at the end, before what reads the checks' output).
coproc REF_SERVER { "$PY" "$REF" serve 2>ref.err; }
ref_pid=$REF_SERVER_PID
ref_failed() { cat ref.err >&2; fail "$(tail -n1 ref.err | grep . || echo "hf_reference.py serve ended early")"; }
ref_send() {  # a line to the server; if it has exited, its error fails the test (not SIGPIPE)
  local rc=0
  trap '' PIPE
  printf '%s\n' "$1" 2>/dev/null >&"${REF_SERVER[1]:-}" || rc=$?  # :- the server was reaped
  trap - PIPE
  [ "$rc" -eq 0 ] || ref_failed
}
check() {  # OUT WHAT hf_reference.py-command args...: OUT gets the command's stdout ('-': none)
  local out="$1" what="$2"; shift 2
  ref_send "$(printf '%s\t%s\t%s' "$out" "$what" "$(printf '%q ' "$@")")"
}
ref_sync() {
  local reply=""
  ref_send sync
  read -r -u "${REF_SERVER[0]:-}" reply 2>/dev/null || true
  [ "$reply" = done ] || ref_failed
}
for model in "hf_rand" "hf_rand_fp16 --fp16" "hf_rand_sharded --sharded" "hf_rand_llama3 --llama3"; do
  check - "could not make a random Llama ($model)" random-llama $model
done
mkdir -p data && make_synthetic data 64 30000 4000
echo '{"tokenizer": "bytes"}' >data/manifest.json
write_tiny_config tiny.yaml data
# The runs to export train for 2 steps at lr 3e-3 (one warmup step): Adam moves each weight by up to
# 2 lr, so the norms are 1 +- ~5e-3, and an export that dropped them would be off by ~4e-3 in the
# logits (measured), 40 times the parity checks' 1e-4; nothing reads the loss or later steps.
STEPS=2
train() {  # name, overrides...
  local name="$1"; shift
  "$EMBER" train -c tiny.yaml --set log.name="$name" --set train.steps=$STEPS --set eval.every=$STEPS \
    --set checkpoint.every=$STEPS --set optim.warmup_steps=1 "$@" \
    >"$name.train.out" 2>&1 || { cat "$name.train.out" >&2; fail "training $name failed"; }
}
export_and_dump() {  # name, export options...
  local name="$1"; shift
  "$EMBER" export hf "runs/$name" --out "exp/$name" "$@" >"$name.export.out" || fail "export of $name failed"
  "$EMBER" eval "runs/$name" --batches 1 --json --logits "$name.logits.safetensors" >"$name.eval.json" \
    || fail "eval of $name failed"
}

# --- export: every embedding kind, GQA, an output scale, tapered + gated attention ----------------
train tied --set model.n_kv_heads=2
train untied --set model.embedding.kind=untied
train scaled --set model.embedding.output_scale=0.5
for kind in lev albert flat_mlp factored_mlp; do train "$kind" --set model.embedding.kind=$kind; done
train tapered_gated --set model.mixer.kind=gated_attention --set model.mlp.taper.schedule=linear
train headwise --set model.mixer.kind=gated_attention --set model.mixer.gated_attention.gate=headwise
pairs=()
for name in tied untied scaled lev albert flat_mlp factored_mlp tapered_gated headwise; do
  export_and_dump "$name"
  pairs+=("exp/$name" "$name.logits.safetensors")
done
"$EMBER" export hf runs/untied --out exp/untied_sharded --max-shard-size 20KB >/dev/null || fail "sharded export failed"
cp untied.logits.safetensors untied_sharded.logits.safetensors
pairs+=(exp/untied_sharded untied_sharded.logits.safetensors)
ls exp/untied_sharded/model-00001-of-*.safetensors exp/untied_sharded/model.safetensors.index.json >/dev/null \
  || fail "no shards or index above --max-shard-size"
check hf_logits.jsonl "transformers' logits differ from ember's" logits "${pairs[@]}"
grep -q "byte-level" exp/tied/README.md || fail "the README of a byte-level export does not say so"
[ -f exp/tapered_gated/modeling_ember.py ] && [ ! -f exp/tied/modeling_ember.py ] || fail "modeling_ember.py misplaced"
export_metadata_and_losses() {  # after the last ref_sync: reads hf_logits.jsonl
  "$PY" - <<'PY' || fail "export metadata or losses wrong"
import json
rows = [json.loads(l) for l in open("hf_logits.jsonl")]
names = ["tied", "untied", "scaled", "lev", "albert", "flat_mlp", "factored_mlp", "tapered_gated", "headwise"]
for name, row in zip(names, rows):
    ember = json.load(open(f"{name}.eval.json"))["loss"]
    assert abs(row["loss"] - ember) < 1e-5, (name, row["loss"], ember)
    cfg = json.load(open(f"exp/{name}/config.json"))
    remote = name in ("tapered_gated", "headwise")
    assert row["class"] == ("EmberForCausalLM" if remote else "LlamaForCausalLM"), (name, row)
    assert cfg["architectures"] == [row["class"]] and ("auto_map" in cfg) == remote, name
    tied = name in ("tied", "tapered_gated", "headwise")  # a scaled head is exported untied
    assert cfg["tie_word_embeddings"] == tied, name
    assert cfg["ember"]["embedding_kind"] == name if name in ("lev", "albert", "flat_mlp", "factored_mlp") else True
    assert cfg["num_key_value_heads"] == (2 if name == "tied" else 4), name
tapered = json.load(open("exp/tapered_gated/config.json"))
assert len(set(tapered["intermediate_sizes"])) > 1 and tapered["attention_gate"] == "elementwise", tapered
assert json.load(open("exp/headwise/config.json"))["attention_gate"] == "headwise"
PY
}

# bf16: the weights are stored as BF16 and load
"$EMBER" export hf runs/tied --out exp/tied_bf16 --dtype bf16 >/dev/null || fail "bf16 export failed"
"$PY" - <<'PY' || fail "bf16 export is not bf16"
import json
from safetensors import safe_open
f = safe_open("exp/tied_bf16/model.safetensors", "np")
assert all(str(f.get_slice(k).get_dtype()) == "BF16" for k in f.keys())
assert json.load(open("exp/tied_bf16/config.json"))["torch_dtype"] == "bfloat16"
PY

# --- round trip: export -> import is bit-identical; a LEV export imports as an untied table -----
for name in tied untied tapered_gated; do
  "$EMBER" import hf "exp/$name" --out "runs/${name}_back" >/dev/null || fail "import of exp/$name failed"
  check - "$name: export -> import changed parameters" same-tensors "runs/$name/checkpoints/step_$STEPS/model.safetensors" \
    "runs/${name}_back/checkpoints/step_0/model.safetensors"
done
grep -q "kind: gated_attention" runs/tapered_gated_back/config.yaml || fail "the mixer was not kept on import"
"$EMBER" import hf exp/lev --out runs/lev_back >/dev/null || fail "import of the LEV export failed"
grep -q "kind: untied" runs/lev_back/config.yaml || fail "a LEV export should import as an untied table"
"$EMBER" eval runs/lev_back --data 'data/val_*.bin' --batches 1 --logits lev_back.logits.safetensors >/dev/null \
  || fail "eval of the imported LEV failed"
check - "the imported LEV table computes differently" logits exp/lev lev_back.logits.safetensors

# --- import a Llama made by transformers: fp32, fp16, sharded --------------------------------------
ref_sync
ls hf_rand_sharded/model.safetensors.index.json >/dev/null || fail "transformers did not shard"
pairs=()
# The fp16 one is imported with trailing slashes, as hf_rand_fp16/ --out runs/slash/ (checked below).
for name in hf_rand hf_rand_fp16 hf_rand_sharded hf_rand_llama3; do
  src="$name" out="runs/$name"
  [ "$name" != hf_rand_fp16 ] || { src="$name/" out=runs/slash/; }
  "$EMBER" import hf "$src" --out "$out" >"$name.import.out" || fail "import of $src failed"
  "$EMBER" eval "${out%/}" --data 'data/val_*.bin' --batches 1 --logits "$name.logits.safetensors" >/dev/null \
    || fail "eval of imported $name failed"
  pairs+=("$name" "$name.logits.safetensors")
done
check import_logits.jsonl "ember's logits of an imported Llama differ" logits "${pairs[@]}"
grep -q "n_kv_heads: 2" runs/hf_rand/config.yaml || fail "GQA not imported"
grep -q "type: llama3" runs/hf_rand_llama3/config.yaml || fail "llama3 RoPE scaling not imported"
"$EMBER" export hf runs/hf_rand_llama3 --out exp/llama3_back >/dev/null || fail "export of a llama3-scaled run failed"
cp hf_rand_llama3.logits.safetensors llama3_back.logits.safetensors
check - "the re-exported llama3-scaled model computes differently in transformers" \
  logits exp/llama3_back llama3_back.logits.safetensors
"$PY" -c "
import json; c = json.load(open('exp/llama3_back/config.json'))
for key in ('rope_parameters', 'rope_scaling'):  # rope_scaling: what transformers 4 and its readers read
    assert c[key]['rope_type'] == 'llama3' and c[key]['factor'] == 8.0, c
assert 'rope_scaling' not in json.load(open('exp/tied/config.json'))" || fail "llama3 scaling not in the exported config.json"
grep -q "name: slash" runs/slash/config.yaml || fail "a trailing slash lost the run's name"
"$EMBER" capacity runs/hf_rand >capacity.out 2>&1 || { cat capacity.out >&2; fail "capacity on an imported run failed"; }
cat >data.yaml <<'YAML'
data: {train: [data/train_*.bin], val: [data/val_*.bin]}
train: {steps: 6, micro_batch: 4, seq_len: 32, threads: 2}
optim: {warmup_steps: 2}
eval: {every: 6, batches: 2}
checkpoint: {every: 6}
YAML
"$EMBER" train -c runs/hf_rand/config.yaml -c data.yaml --run-dir runs/hf_rand --resume >cont.out 2>&1 \
  || { cat cont.out >&2; fail "continued training of an imported run failed"; }
grep -q "starting from the weights" cont.out || fail "continued training did not start from the imported weights"
[ -d runs/hf_rand/checkpoints/step_6 ] || fail "continued training wrote no checkpoint"

# --- tokenizers: tokenizer.json encodes like tiktoken; byte-level like bytes ------------------------
"$PY" "$HERE/tokenizer_reference.py" text mixed.txt 0.3 11
# The text quotes ember's sources, some of which spell special tokens ("<|eot_id|>"): tokenizer.json
# matches those as its added tokens (as Hugging Face tokenizers do) where tiktoken's encode_ordinary
# does not, so they are broken up here and the added tokens are checked on their own below.
"$PY" - mixed.txt <<'PY'
import sys
t = open(sys.argv[1], encoding="utf-8", newline="").read()
open(sys.argv[1], "w", encoding="utf-8", newline="").write(t.replace("<|", "< |"))
PY
for preset in r50k_base cl100k_base o200k_base llama3; do
  "$EMBER" tokenizer hf --preset "$preset" --out "tok_$preset" >/dev/null || fail "tokenizer hf $preset failed"
  check - "$preset: transformers could not encode" encode "tok_$preset" mixed.txt "hf_$preset.ids"
  check - "$preset: tiktoken could not encode" tiktoken "$EMBER_SOURCE_DIR/third_party/tokenizers" "$preset" \
    mixed.txt "tiktoken_$preset.ids"
done
check - "llama3: tokenizer.json does not encode its special tokens as added tokens" added-token tok_llama3
check - "the byte-level tokenizer.json does not load" encode exp/tied mixed.txt bytes.ids
# tokenizer hf --bytes (with --max-length) and --file (a rank file of `ember tokenizer train`): the
# files encode as ember does.
"$EMBER" tokenizer hf --bytes --max-length 77 --out tok_bytes >/dev/null || fail "tokenizer hf --bytes"
check - "tokenizer hf --bytes: transformers could not encode" encode tok_bytes mixed.txt tok_bytes.ids
"$PY" -c "import json; assert json.load(open('tok_bytes/tokenizer_config.json'))['model_max_length'] == 77" \
  || fail "--max-length is not model_max_length"
mkdir -p tcorpus && cp mixed.txt tcorpus/
"$EMBER" tokenizer train tcorpus --ext .txt --vocab-size 400 --out tok/mixed.tiktoken >/dev/null 2>&1 || fail "tokenizer train"
"$EMBER" tokenizer hf --file tok/mixed.tiktoken --out tok_file >/dev/null || fail "tokenizer hf --file"
check - "tokenizer hf --file: transformers could not encode" encode tok_file mixed.txt tok_file.ids
"$EMBER" tokenizer encode --file tok/mixed.tiktoken <mixed.txt | tr ' ' '\n' | grep . >ember_file.ids

# --- bad input: one line, non-zero, nothing written --------------------------------------------------
expect_error "is not a directory" "$EMBER" import hf nowhere --out runs/x
mkdir -p empty && expect_error "no config.json" "$EMBER" import hf empty --out runs/x
bad_config() {  # dir, python expression editing c
  rm -rf "$1" && cp -r hf_rand "$1"
  "$PY" -c "import json; c = json.load(open('$1/config.json')); $2; json.dump(c, open('$1/config.json', 'w'))"
}
bad_config mistral "c['model_type'] = 'mistral'; c['architectures'] = ['MistralForCausalLM']"
expect_error "model_type 'mistral' is not supported" "$EMBER" import hf mistral --out runs/x
bad_config scaled_rope "c['rope_parameters'] = {'rope_type': 'yarn', 'rope_theta': 5000.0, 'factor': 8.0}"
expect_error "type 'yarn' (RoPE scaling) is not supported" "$EMBER" import hf scaled_rope --out runs/x
bad_config half_llama3 "c['rope_parameters'] = {'rope_type': 'llama3', 'rope_theta': 5000.0, 'factor': 8.0}"
expect_error "no 'low_freq_factor'" "$EMBER" import hf half_llama3 --out runs/x
bad_config biased "c['attention_bias'] = True"
expect_error "attention_bias" "$EMBER" import hf biased --out runs/x
bad_config narrow "c['intermediate_size'] = 128"
expect_error "has shape 160x64, the config needs 128x64" "$EMBER" import hf narrow --out runs/x
rm -rf noweights && mkdir noweights && cp hf_rand/config.json noweights/
expect_error "no model.safetensors" "$EMBER" import hf noweights --out runs/x
[ ! -e runs/x ] && [ -z "$(ls -A runs | grep partial || true)" ] || fail "a failed import left files behind"
tree_sums() { find "$1" -type f -print0 | sort -z | xargs -0 sha256sum; }
tree_sums runs/tied >tied.before
expect_error "exists and is not empty" "$EMBER" import hf hf_rand --out runs/tied
tree_sums runs/tied | cmp -s - tied.before || fail "a refused import changed runs/tied"
train titans --set model.mixer.kind=titans
expect_error "mixer 'titans' has no transformers counterpart" "$EMBER" export hf runs/titans --out exp/titans
[ ! -e exp/titans ] || fail "a refused export left a directory"
tree_sums exp/untied >untied.before
expect_error "exists and is not empty" "$EMBER" export hf runs/tied --out exp/untied
tree_sums exp/untied | cmp -s - untied.before || fail "a refused export changed exp/untied"
expect_error "is not a size" "$EMBER" export hf runs/tied --out exp/y --max-shard-size lots
[ ! -e exp/y ] || fail "a refused export (bad --max-shard-size) left exp/y"

# --- transformers' side of every check queued above, then what reads its output ----------------------
ref_sync
eval "exec ${REF_SERVER[1]}>&-"  # the end of its stdin: the server exits
wait "$ref_pid" || ref_failed
export_metadata_and_losses
for preset in r50k_base cl100k_base o200k_base llama3; do
  cmp -s "hf_$preset.ids" "tiktoken_$preset.ids" || fail "$preset: tokenizer.json encodes differently from tiktoken"
done
"$PY" -c "
ids = list(map(int, open('bytes.ids').read().split()))
assert ids == list(open('mixed.txt', 'rb').read()), 'byte-level tokenizer.json is not id = byte'" || fail "bytes"
cmp -s tok_bytes.ids bytes.ids || fail "tokenizer hf --bytes is not id = byte"
"$PY" -c "
a = open('tok_file.ids').read().split(); b = open('ember_file.ids').read().split()
assert a == b and len(a) > 0, (len(a), len(b))" || fail "tokenizer hf --file encodes differently from ember"
echo "hf interop: exports load in transformers with ember's logits, imports match transformers' logits"
