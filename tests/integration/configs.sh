# Every shipped config validates; the tapered family keeps the uniform budget exactly at every
# scale, and the uniform models land on the paper's sizes.
source "$(dirname "$0")/lib_common.sh"
CONFIGS="$EMBER_SOURCE_DIR/configs"
"$EMBER" config -c "$CONFIGS/tiny.yaml" >/dev/null || fail "tiny.yaml does not validate"
# The resolved config reads back as numbers in YAML 1.1 readers (PyYAML, hence OmegaConf), which
# take "1e-06" for a string: ember writes 1.0e-06.
"$EMBER" config -c "$CONFIGS/tiny.yaml" --set model.norm_eps=1e-6 --set optim.eps=1e-8 --set optim.lr=2e-3 >resolved.yaml
"$PY" - <<'PY' || fail "PyYAML reads a number in the resolved config as a string"
import yaml
d = yaml.safe_load(open("resolved.yaml"))
assert d["model"]["norm_eps"] == 1e-6 and isinstance(d["model"]["norm_eps"], float), d["model"]["norm_eps"]
assert d["optim"]["eps"] == 1e-8 and d["optim"]["lr"] == 2e-3, d["optim"]
assert isinstance(d["model"]["mixer"]["rope_base"], float), d["model"]["mixer"]
def leaves(x, path=""):
    if isinstance(x, dict):
        for k, v in x.items():
            yield from leaves(v, f"{path}.{k}" if path else k)
    elif isinstance(x, list):
        for v in x:
            yield from leaves(v, path)
    else:
        yield path, x
n = 0
for path, v in leaves(d):
    n += 1
    if isinstance(v, str):
        try:
            float(v)
        except ValueError:
            continue
        raise AssertionError(f"{path}: {v!r} read as a string")
assert n > 50, n
PY
"$EMBER" config -c resolved.yaml >again.yaml && cmp resolved.yaml again.yaml || fail "the resolved config does not round-trip"
# --json: the same resolved config as JSON.
"$EMBER" config -c resolved.yaml --json >resolved.json || fail "config --json"
"$PY" -c "
import json, yaml
assert json.load(open('resolved.json')) == yaml.safe_load(open('resolved.yaml'))" || fail "config --json differs from the YAML"
for scale in cpu:0 440m:439.7 760m:766.8 1.3b:1308.7; do
  name=${scale%%:*}; want=${scale#*:}
  overlays="uniform linear cosine sigmoid wider_early wider_middle wider_late"
  # One inspect of every overlay over the scale: a JSON list in the files' order. At the CPU scale
  # the same call describes mixers/gated_attention.yaml over tapered/cpu.yaml last (checked below).
  extra=(); [ "$name" = cpu ] && extra=("$CONFIGS/mixers/gated_attention.yaml")
  "$EMBER" inspect -c "$CONFIGS/tapered/$name.yaml" $(for o in $overlays; do echo "$CONFIGS/tapered/$o.yaml"; done) \
    "${extra[@]}" --json >"$name.json" || fail "tapered/$name.yaml with one of its overlays does not validate"
  "$PY" - "$name" "$want" $overlays <<'PY' || fail "tapered $name: budgets differ or size is off"
import json, sys
name, want, overlays = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
models = json.load(open(f"{name}.json"))
extra = ["gated_attention.yaml"] if name == "cpu" else []
assert [m["config"].split("/")[-1] for m in models] == [f"{o}.yaml" for o in overlays] + extra, [m["config"] for m in models]
models = models[:len(overlays)]
runs = dict(zip(overlays, models))
base = runs["uniform"]
for o, r in runs.items():
    assert r["total_params"] == base["total_params"], (o, r["total_params"], base["total_params"])
    assert r["train_flops_per_token"] == base["train_flops_per_token"], o
    widths = [l["d_ff"] for l in r["layers"]]
    if o in ("linear", "cosine", "sigmoid", "wider_early"):
        assert widths == sorted(widths, reverse=True) and widths[0] > widths[-1], (o, widths)
if want:
    got = base["total_params"] / 1e6
    assert abs(got - want) < 0.1, (name, got, want)
print(name, base["total_params"], [l["d_ff"] for l in runs["cosine"]["layers"]])
PY
done
# Every embedding kind of the registry has an overlay in configs/leviathan.
KINDS=$("$EMBER" config --kinds --json | "$PY" -c '
import json, sys
seams = {s["key"]: [k["kind"] for k in s["kinds"]] for s in json.load(sys.stdin)}
print(" ".join(seams["model.embedding.kind"]))')
[ "$(echo $KINDS | wc -w)" -ge 6 ] || fail "config --kinds lists too few embedding kinds: $KINDS"
for kind in $KINDS; do
  [ -f "$CONFIGS/leviathan/$kind.yaml" ] || fail "embedding kind $kind has no overlay configs/leviathan/$kind.yaml"
done
export KINDS
# Leviathan: every scale x embedding kind validates; the input sides of the ablation are parameter
# matched to LEV, and untied adds exactly one V x D table to tied.
for scale in cpu 200m 400m 1.2b; do
  "$EMBER" inspect -c "$CONFIGS/leviathan/$scale.yaml" $(for k in $KINDS; do echo "$CONFIGS/leviathan/$k.yaml"; done) \
    --json >"lev.$scale.json" || fail "leviathan/$scale.yaml with one of its kinds does not validate"
  "$PY" - "$scale" <<'PY' || fail "leviathan $scale: parameter bookkeeping is off"
import json, os, sys
s = sys.argv[1]
kinds = os.environ["KINDS"].split()
models = json.load(open(f"lev.{s}.json"))
assert [m["embedding_kind"] for m in models] == kinds, [m["embedding_kind"] for m in models]
r = dict(zip(kinds, models))
table = r["tied"]["embedding_params"]
assert r["untied"]["total_params"] - r["tied"]["total_params"] == table
lev = r["lev"]["embedding_params"]
for k in ["flat_mlp", "factored_mlp"]:
    assert abs(r[k]["embedding_params"] / lev - 1) < 0.02, (k, r[k]["embedding_params"], lev)
for k in ["albert", "flat_mlp", "factored_mlp"]:
    assert r[k]["head_params"] == r["untied"]["head_params"]
# albert's width m is an integer: its input side m (V + D) is as close to P_LEV as one step allows
# (within 2% when m >= 25; at 400M, m = 9 lands 4.9% above).
step = r["tied"]["vocab_size"] + r["tied"]["d_model"]  # one more albert dim adds V + D
assert abs(r["albert"]["embedding_params"] - lev) <= step / 2 + 1, (r["albert"]["embedding_params"], lev)
# inspect reports the match against the closed-form P_LEV for every generated kind
for k in ["albert", "flat_mlp", "factored_mlp", "lev"]:
    assert r[k]["lev_budget_params"] == lev, (k, r[k]["lev_budget_params"], lev)
    assert abs(r[k]["embedding_vs_lev"] - (r[k]["embedding_params"] / lev - 1)) < 1e-12
assert "lev_budget_params" not in r["tied"] and "lev_budget_params" not in r["untied"]
assert r["albert"]["embedding_step"] == step, r["albert"]["embedding_step"]
print(s, "tied", r["tied"]["total_params"], "untied", r["untied"]["total_params"], "lev", r["lev"]["total_params"],
      "P_LEV", lev)
PY
done
# The BPE overlay of the CPU ablation: every kind validates and the generators match P_LEV.
"$EMBER" inspect -c "$CONFIGS/leviathan/cpu.yaml" -c "$CONFIGS/leviathan/cpu_bpe.yaml" \
  $(for k in $KINDS; do echo "$CONFIGS/leviathan/$k.yaml"; done) --json >bpe.json \
  || fail "cpu_bpe.yaml with one of the kinds does not validate"
"$PY" - <<'PY' || fail "cpu_bpe: bookkeeping is off"
import json, os
kinds = os.environ["KINDS"].split()
models = json.load(open("bpe.json"))
assert [m["embedding_kind"] for m in models] == kinds, [m["embedding_kind"] for m in models]
r = dict(zip(kinds, models))
assert all(x["vocab_size"] == 8192 for x in r.values())
assert r["tied"]["embedding_params"] == 8192 * 128
for k in ["flat_mlp", "factored_mlp", "lev"]:
    assert abs(r[k]["embedding_vs_lev"]) < 0.02, (k, r[k]["embedding_vs_lev"])
PY
# The gated-attention overlay adds d * H * d_h per layer and nothing else: cpu.json holds
# tapered/cpu.yaml + uniform.yaml first and tapered/cpu.yaml + mixers/gated_attention.yaml last.
"$PY" - <<'PY' || fail "gated attention parameter delta is off"
import json
models = json.load(open("cpu.json"))
a, b = models[0], models[-1]
assert a["config"].endswith("/tapered/uniform.yaml") and b["config"].endswith("/mixers/gated_attention.yaml"), models
d, L = a["d_model"], len(a["layers"])
assert L == 6 and len(b["layers"]) == L, (L, len(b["layers"]))  # tapered/cpu.yaml has 6 layers
assert b["mixer"] == "gated_attention" and a["mixer"] == "attention"
assert b["total_params"] - a["total_params"] == L * d * d, (a["total_params"], b["total_params"])
PY
# Each kind's options live in its own section; the old flat keys say where they went.
expect_error "model.mixer.gate: this key moved to model.mixer.gated_attention.gate" \
  "$EMBER" inspect "$CONFIGS/tapered/cpu.yaml" --set model.mixer.gate=headwise
expect_error "model.mixer.gated_attention.gate: expected one of elementwise | headwise | none, got 'heads'" \
  "$EMBER" inspect "$CONFIGS/tapered/cpu.yaml" --set model.mixer.gated_attention.gate=heads
expect_error "unknown key 'model.mixer.gated_atention' (did you mean 'model.mixer.gated_attention'?)" \
  "$EMBER" inspect "$CONFIGS/tapered/cpu.yaml" --set model.mixer.gated_atention.gate=headwise
expect_error "start = 1.6 and end = 0.5 must sum to 2" "$EMBER" inspect "$CONFIGS/tapered/cpu.yaml" \
  --set model.mlp.taper.schedule=cosine --set model.mlp.taper.start=1.6
expect_error "3 groups do not divide n_layers = 8" "$EMBER" inspect "$CONFIGS/tapered/cpu.yaml" \
  --set model.mlp.taper.schedule=groups --set model.n_layers=8
# Two configs side by side.
"$EMBER" inspect -c "$CONFIGS/tapered/cpu.yaml" "$CONFIGS/tapered/uniform.yaml" "$CONFIGS/tapered/cosine.yaml" >diff.txt
grep -q "B - A" diff.txt && grep -q "total_params" diff.txt || fail "side-by-side inspect"
# Three or more: a column each, the widths those of the JSON (cpu.json lists uniform, linear, cosine first).
"$EMBER" inspect -c "$CONFIGS/tapered/cpu.yaml" "$CONFIGS/tapered/uniform.yaml" "$CONFIGS/tapered/linear.yaml" \
  "$CONFIGS/tapered/cosine.yaml" >three.txt
"$PY" - <<'PY' || { cat three.txt; fail "three configs side by side"; }
import json
lines = open("three.txt").read().splitlines()
assert lines[2].startswith("M3 = ") and lines[2].endswith("cosine.yaml"), lines[:3]
models = json.load(open("cpu.json"))[:3]
rows = [l.split() for l in lines if l.split() and l.split()[0].isdigit()]
assert len(rows) == len(models[0]["layers"]), rows
for l, row in enumerate(rows):
    assert [int(x) for x in row[1:]] == [m["layers"][l]["d_ff"] for m in models], (l, row)
assert any(l.startswith("total_params") for l in lines), lines
PY
"$EMBER" inspect "$CONFIGS/leviathan/400m.yaml" -c "$CONFIGS/leviathan/albert.yaml" >albert.txt
grep -q "vs P_LEV     1728640 (+4.86%); albert moves in steps of 201400" albert.txt \
  || fail "inspect does not show albert's match to P_LEV: $(grep -A1 embedding_params albert.txt)"
echo "all configs validate; tapered budgets are exact"
