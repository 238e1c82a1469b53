# ember report --summaries: a small sweep's runs (2 members x 2 seeds, evaluated by buckets and
# capacity) written as summaries give the same report.csv and report.md table as the run
# directories; from summaries only the figures of final values are drawn; a malformed summary is
# one line naming the file and key.
source "$(dirname "$0")/lib_common.sh"
mkdir -p data
make_synthetic data 64 20000 3000 >/dev/null
write_tiny_config base.yaml data
cat >s.yaml <<'YAML'
out: sw
configs: [base.yaml]
set: {train.steps: 8, optim.warmup_steps: 2, eval.every: 4, checkpoint.every: 100, log.every: 2, eval.capacity_every: 4, train.threads: 1}
grid:
  model.mixer.kind: [attention, short_conv]
seeds: [1, 2]
evals: [perplexity, buckets, capacity]
YAML
"$EMBER" sweep s.yaml --parallel 2 >sweep.out 2>&1 || { cat sweep.out >&2; fail "sweep failed"; }
"$EMBER" report sw/*/ --baseline attention --out from_runs --summaries kept >from_runs.md 2>/dev/null \
  || fail "ember report --summaries failed"
[ "$(ls kept)" = "$(printf '%s\n' attention_seed1 attention_seed2 short_conv_seed1 short_conv_seed2)" ] \
  || { ls kept >&2; fail "one summary per run expected in kept/<run>/"; }
"$PY" - <<'PY' || fail "a summary disagrees with its run's eval.json"
import json
s = json.load(open("kept/short_conv_seed2/summary.json"))
ev = json.load(open("sw/short_conv_seed2/eval.json"))
assert s["val_loss"] == ev["loss"] and s["val_ppl"] == ev["perplexity"], (s["val_loss"], ev["loss"])
assert s["capacity"]["epsilon"] == ev["capacity"]["epsilon"] and s["capacity"]["histogram"] == ev["capacity"]["histogram"]
assert [b["perplexity"] for b in s["buckets"]] == [b["perplexity"] for b in ev["buckets"] if b["tokens"] > 0]
assert s["seed"] == 2 and s["settings"]["model.mixer.kind"] == "short_conv" and s["run"] == "sw/short_conv_seed2/", s["run"]
PY
"$EMBER" report kept/*/ --baseline attention --out from_summaries >from_summaries.md || fail "ember report on summaries failed"
cmp from_runs/report.csv from_summaries/report.csv || fail "report.csv from the summaries differs"
[ "$(sed '/^## Figures/,$d' from_runs/report.md)" = "$(sed '/^## Figures/,$d' from_summaries/report.md)" ] \
  || fail "report.md from the summaries differs (before its figures)"
grep -q "^| input epsilon | 1: " from_summaries/report.md || fail "the summaries lost the capacity evaluation"
for fig in val_loss_bars val_loss_diff bucket_ppl cosine_histogram; do
  grep -qF "]($fig.png)" from_summaries/report.md || fail "the report from summaries lacks $fig"
done
for fig in val_loss train_loss epsilon; do
  ! grep -qF "]($fig.png)" from_summaries/report.md || fail "a report from summaries has no curves, yet links $fig"
done
# Malformed summaries: one line naming the file and the key, nothing written.
cp -r kept bad
sed -i '/"train_loss"/d' bad/attention_seed1/summary.json
expect_error "report: bad/attention_seed1/summary.json: train_loss: missing" \
  "$EMBER" report bad/*/ --out bad_out
sed 's/"val_tokens"/"val_token"/' kept/attention_seed1/summary.json >bad/attention_seed1/summary.json
expect_error "bad/attention_seed1/summary.json: val_token: unknown key (did you mean 'val_tokens'?)" \
  "$EMBER" report bad/*/ --out bad_out
sed 's/"seed": 1/"seed": "one"/' kept/attention_seed1/summary.json >bad/attention_seed1/summary.json
expect_error "bad/attention_seed1/summary.json: seed: expected a number, got \"one\"" \
  "$EMBER" report bad/attention_seed1/summary.json
[ ! -e bad_out ] || fail "a refused report wrote files"
