# Every mixer overlay at the paper's 760M and 1.3B scales, uniform and cosine-tapered, passes
# `ember inspect`, and its parameters equal the closed form of docs/mixers.md for each layer: the
# mixer's own count (the same in every layer: only the MLP is tapered) + 3 d d_ff(l) + the norm
# gains (Hope-attention: one per CMS level); and the taper leaves each mixer's total unchanged.
source "$(dirname "$0")/lib_common.sh"
CONFIGS="$EMBER_SOURCE_DIR/configs"
KINDS="attention gated_attention titans titans_mag hope_attention"
for scale in 760m 1.3b; do
  # One inspect per scale and taper: each mixer overlay is merged over the same two base files
  # and described on its own, as one call per overlay would (a JSON list in the files' order).
  for taper in uniform cosine; do
    "$EMBER" inspect -c "$CONFIGS/tapered/$scale.yaml" -c "$CONFIGS/tapered/$taper.yaml" \
      $(for kind in $KINDS; do echo "$CONFIGS/mixers/$kind.yaml"; done) --json >"$scale.$taper.json" \
      || fail "tapered/$scale.yaml + $taper.yaml + one of mixers/{${KINDS// /,}}.yaml does not validate"
  done
  "$PY" - "$scale" $KINDS <<'PY' || fail "$scale: a mixer's parameters differ from the closed form"
import json, sys
scale, kinds = sys.argv[1], sys.argv[2:]
heads = {"760m": 12, "1.3b": 16}[scale]
def mixer_params(kind, d, H):
    dh = d // H  # MHA: H d_h = d
    k_conv, n_p, m = 4, 4, 4 * dh  # the overlays' conv_kernel, persistent_tokens, memory_expansion
    if kind in ("attention", "hope_attention"):
        return 4 * d * d
    if kind == "gated_attention":  # + W_theta (elementwise): d x H d_h
        return 5 * d * d
    memory = 3 * H * dh * k_conv + 3 * H * d + 3 * H + 2 * H * dh * m + n_p * d
    if kind == "titans":  # 5 d H d_h + ... + d_h (the per-head output norm)
        return 5 * d * H * dh + memory + dh
    if kind == "titans_mag":  # 7 d H d_h + ... + 2 d_h (two per-head norms)
        return 7 * d * H * dh + memory + 2 * dh
    raise AssertionError(kind)
models = {}
for taper in ("uniform", "cosine"):
    listed = json.load(open(f"{scale}.{taper}.json"))
    assert [m["config"].split("/")[-1] for m in listed] == [f"{k}.yaml" for k in kinds], [m["config"] for m in listed]
    models.update({(kind, taper): m for kind, m in zip(kinds, listed)})
totals = {}
for kind in kinds:
    for taper in ("uniform", "cosine"):
        r = models[(kind, taper)]
        d = r["d_model"]
        norms = (1 + (4 if kind == "hope_attention" else 1)) * d  # mixer norm + one per MLP level
        for layer in r["layers"]:
            want = mixer_params(kind, d, heads) + 3 * d * layer["d_ff"] + norms
            assert layer["params"] == want, (kind, taper, layer["layer"], layer["params"], want)
            assert layer["mixer_params"] == mixer_params(kind, d, heads), (kind, layer)
        assert r["total_params"] == r["embedding_params"] + sum(l["params"] for l in r["layers"]) + r["head_params"]
        totals[(kind, taper)] = r["total_params"]
        widths = [l["d_ff"] for l in r["layers"]]
        if taper == "cosine":
            assert widths[0] > widths[-1], (kind, widths)
    assert totals[(kind, "uniform")] == totals[(kind, "cosine")], (kind, totals)
    print(scale, kind, totals[(kind, "uniform")])
PY
done
