# ember sweep / ember report end to end on a synthetic corpus: a 2 x 2-seed grid where one member
# was interrupted beforehand (it resumes), a second call that retrains nothing, the report's numbers
# against an independent computation from the members' eval.json, --parallel, --emit slurm, and
# bad sweeps that fail before anything is created.
source "$(dirname "$0")/lib_common.sh"
mkdir -p data
make_synthetic data 64 60000 6000 >/dev/null
write_tiny_config base.yaml data
cat >s.yaml <<'YAML'
out: sw
configs: [base.yaml]
set: {train.steps: 20, eval.every: 10, checkpoint.every: 10, log.every: 5, eval.capacity_every: 10}
grid:
  model.mixer.kind: [attention, short_conv]
seeds: [1, 2]
baseline: attention
evals: [perplexity, buckets, capacity]
YAML
"$EMBER" sweep s.yaml --dry-run >dry.txt || fail "dry run failed"
[ "$(wc -l <dry.txt)" -eq 4 ] || { cat dry.txt >&2; fail "dry run should list 4 members"; }
[ ! -e sw ] || fail "a dry run created the output directory"
# Interrupt member 0 by hand (its own command, stopped after 10 steps): the sweep must resume it.
cmd=$(sed -n 's/^\[0\] attention_seed1: //p' dry.txt)
eval "$cmd --stop-after 10" >/dev/null 2>&1 || fail "the member's command failed: $cmd"
[ -d sw/attention_seed1/checkpoints ] || fail "the interrupted member left no checkpoint"
"$EMBER" sweep s.yaml >sweep.out 2>sweep.err || { cat sweep.err >&2; fail "sweep failed"; }
grep -q "== attention_seed1: resuming" sweep.out || { cat sweep.out >&2; fail "the interrupted member was not resumed"; }
for m in attention_seed2 short_conv_seed1 short_conv_seed2; do
  grep -q "== $m: training" sweep.out || fail "$m was not trained"
  grep -q "== $m: complete" sweep.out || fail "$m did not complete"
done
for m in attention_seed1 attention_seed2 short_conv_seed1 short_conv_seed2; do
  [ -f "sw/$m/eval.json" ] || fail "$m has no eval.json"
  grep -q '"buckets"' "sw/$m/eval.json" || fail "$m was not evaluated by buckets"
  [ "$(grep '"kind":"train"' "sw/$m/metrics.jsonl" | tail -1 | sed 's/.*"step":\([0-9]*\).*/\1/')" = 20 ] || fail "$m did not reach step 20"
done
[ -f sw/report.md ] && [ -f sw/report.csv ] || fail "no report written"
[ "$(wc -l <sw/report.csv)" -eq 7 ] || { cat sw/report.csv >&2; fail "report.csv should have a header and 2 x (2 seeds + summary) rows"; }
grep -q "short_conv vs attention: " sw/report.md || fail "report.md lacks the comparison line"
grep -q "^## Paired differences against \`attention\`" sw/report.md || fail "report.md lacks the paired differences"
grep -q "^Seeds 1, 2 (both members)\.$" sw/report.md || fail "report.md does not say which seeds were paired"
grep -Eq "^\| val_loss \| 1: [-+][0-9.e-]+, 2: [-+][0-9.e-]+ \| .* \| [0-2]/2 \| (not )?resolved \|$" sw/report.md \
  || { cat sw/report.md >&2; fail "report.md lacks the paired val_loss line"; }
# The report's numbers, recomputed from the members' files.
"$PY" - <<'PY' || fail "report.csv disagrees with the members' eval.json"
import csv, json, math, statistics
table = list(csv.DictReader(open("sw/report.csv")))
rows = {r["member"]: r for r in table if r["row"] == "summary"}
seed_rows = {(r["member"], int(r["seed"])): r for r in table if r["row"] == "seed"}
assert sorted(seed_rows) == [(g, s) for g in ("attention", "short_conv") for s in (1, 2)], sorted(seed_rows)
assert set(rows) == {"attention", "short_conv"}, rows.keys()
ppl = {g: [json.load(open(f"sw/{g}_seed{s}/eval.json"))["perplexity"] for s in (1, 2)] for g in rows}
for g, r in rows.items():
    assert r["model.mixer.kind"] == g and r["seeds"] == "2", r
    assert math.isclose(float(r["val_ppl"]), statistics.mean(ppl[g]), rel_tol=1e-5), (g, r["val_ppl"], ppl[g])
    assert math.isclose(float(r["val_ppl_std"]), statistics.stdev(ppl[g]), rel_tol=1e-4, abs_tol=1e-9), g
change = 100 * (statistics.mean(ppl["short_conv"]) / statistics.mean(ppl["attention"]) - 1)
assert math.isclose(float(rows["short_conv"]["val_ppl_change_pct"]), change, rel_tol=1e-3, abs_tol=1e-3), change
assert float(rows["attention"]["rare_ppl"]) > 0 and float(rows["attention"]["val_ppl_change_pct"]) == 0
# Paired differences per seed and their 95% t interval (1 degree of freedom: t = tan(0.475 pi)).
ev = {(g, s): json.load(open(f"sw/{g}_seed{s}/eval.json")) for g in rows for s in (1, 2)}
t1 = math.tan(0.475 * math.pi)
buckets = [b["range"] for b in ev[("attention", 1)]["buckets"] if b["tokens"] > 0]
assert buckets and all(f"ppl {b} ci_low" in table[0] for b in buckets), (buckets, list(table[0]))
s = rows["short_conv"]
assert s["n_common_seeds"] == "2" and s["common_seeds"] == "1;2", s
assert rows["attention"]["val_loss_mean_diff"] == "", "the baseline is compared with itself"
for col, get in [("val_loss_", lambda e: e["loss"]), ("val_ppl_", lambda e: e["perplexity"])] + [
        (f"ppl {b} ", lambda e, b=b: next(x["perplexity"] for x in e["buckets"] if x.get("range") == b)) for b in buckets]:
    d = [get(ev[("short_conv", k)]) - get(ev[("attention", k)]) for k in (1, 2)]
    for k in (1, 2):
        assert math.isclose(float(seed_rows[("short_conv", k)][col + "diff"]), d[k - 1], rel_tol=1e-9, abs_tol=1e-12), (col, k)
    m, sd = statistics.mean(d), statistics.stdev(d)
    lo, hi = m - t1 * sd / math.sqrt(2), m + t1 * sd / math.sqrt(2)
    for key, want in (("mean_diff", m), ("sd_diff", sd), ("ci_low", lo), ("ci_high", hi)):
        assert math.isclose(float(s[col + key]), want, rel_tol=1e-6, abs_tol=1e-9), (col, key, s[col + key], want)
    assert s[col + "resolved"] == ("yes" if lo > 0 or hi < 0 else "no"), (col, lo, hi)
    assert int(s[col + "sign_agree"]) == sum((x > 0) - (x < 0) == (m > 0) - (m < 0) for x in d), col
# The final input embedding's geometry (evals: [capacity]): its mean and paired difference.
for g in rows:
    eps = [ev[(g, k)]["capacity"]["epsilon"] for k in (1, 2)]
    assert math.isclose(float(rows[g]["input epsilon"]), statistics.mean(eps), rel_tol=1e-9), (g, eps)
d = [ev[("short_conv", k)]["capacity"]["mu"] - ev[("attention", k)]["capacity"]["mu"] for k in (1, 2)]
assert math.isclose(float(s["input mu mean_diff"]), statistics.mean(d), rel_tol=1e-9, abs_tol=1e-12), d
PY
# Nothing left to train: everything is skipped, and the report is the same.
cp sw/report.csv first.csv
"$EMBER" sweep s.yaml >again.out 2>&1 || fail "second sweep failed"
[ "$(grep -c 'complete, skipped' again.out)" -eq 4 ] || { cat again.out >&2; fail "complete members were not skipped"; }
diff -q first.csv sw/report.csv >/dev/null || fail "the report changed without training"
# The figures, PNG and SVG, linked from report.md; the capacity evaluation's histogram in eval.json.
for fig in val_loss_bars val_loss_diff val_loss train_loss bucket_ppl epsilon cosine_histogram; do
  [ "$(head -c 8 sw/$fig.png | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "sw/$fig.png is not a PNG"
  [ "$(stat -c %s sw/$fig.png)" -gt 10000 ] || fail "sw/$fig.png is suspiciously small"
  grep -q "<svg" sw/$fig.svg || fail "sw/$fig.svg is not an SVG"
  grep -qF "]($fig.png) ([SVG]($fig.svg))" sw/report.md || fail "report.md does not link $fig"
done
"$PY" - <<'PY' || fail "eval.json's capacity disagrees with its histogram"
import json
c = json.load(open("sw/attention_seed1/eval.json"))["capacity"]
h = c["histogram"]
assert len(h) == 2000 and sum(h) == c["pairs"] == c["V"] * (c["V"] - 1) // 2, (len(h), sum(h), c["pairs"])
mu = sum(n * (-1 + (i + 0.5) * 0.001) for i, n in enumerate(h)) / sum(h)  # bin centres: mu within a bin width
assert abs(mu - c["mu"]) < 1e-3 and c["epsilon"] > c["mu"], (mu, c["mu"])
eps = [json.loads(l) for l in open("sw/attention_seed1/metrics.jsonl") if '"kind":"capacity"' in l]
assert [e["step"] for e in eps] == [10, 20], eps
PY
# ember report on the same runs prints the same table (and with --out writes the same report.md).
"$EMBER" report sw/attention_seed1 sw/attention_seed2 sw/short_conv_seed1 sw/short_conv_seed2 --baseline attention \
  >report.md || fail "ember report failed"
[ "$(sed '/^## Figures/,$d' sw/report.md)" = "$(cat report.md)" ] || fail "ember report differs from the sweep's report.md"
"$EMBER" report sw/attention_seed1 sw/attention_seed2 sw/short_conv_seed1 sw/short_conv_seed2 --baseline attention \
  --out rebuilt >rebuilt.md || fail "ember report --out failed"
diff -q rebuilt/report.md sw/report.md >/dev/null && diff -q rebuilt.md sw/report.md >/dev/null \
  || fail "ember report --out differs from the sweep's report.md"
diff -q rebuilt/report.csv sw/report.csv >/dev/null || fail "ember report --out wrote another report.csv"
# Two at a time, each member's output in its log.
# (with a multiple-choice task whose bytes lie inside the synthetic vocabulary of 64)
printf '%s\n' '{"context": "0123", "endings": ["45", "9"], "label": 0}' '{"context": "5", "endings": ["6", "7"], "label": 1}' >mc.jsonl
# (perplexity only: nothing here reads the buckets or the capacity evaluation, checked above)
sed -e 's/^out: sw/out: sw2/' -e 's/^seeds: .*/seeds: [7]/' -e 's/train.steps: 20/train.steps: 10/' \
  -e 's/^evals: .*/evals: [perplexity]/' s.yaml >s2.yaml
echo 'tasks: [{name: digits, kind: choice, file: mc.jsonl}]' >>s2.yaml
echo '{"tokenizer": "bytes"}' >data/manifest.json  # tasks read text with the data's tokenizer
"$EMBER" sweep s2.yaml --parallel 2 >par.out 2>&1 || { cat par.out >&2; fail "parallel sweep failed"; }
[ -f sw2/logs/attention.log ] && [ -f sw2/logs/short_conv.log ] || fail "parallel members have no logs"
[ -f sw2/attention/eval.json ] && [ -f sw2/short_conv/eval.json ] || fail "parallel members incomplete"
"$PY" - <<'PY' || fail "the task's accuracy is not in eval.json and the report"
import csv, json
rows = {r["member"]: r for r in csv.DictReader(open("sw2/report.csv")) if r["row"] == "summary"}
for m in ("attention", "short_conv"):
    t = json.load(open(f"sw2/{m}/eval.json"))["tasks"]["digits"]
    assert t["items"] == 2 and t["task"] == "choice", t
    assert abs(float(rows[m]["digits acc"]) - t["accuracy"]) < 1e-9 and abs(float(rows[m]["digits acc_norm"]) - t["accuracy_norm"]) < 1e-9
PY
want_threads=$("$PY" -c 'import os; print(max(1, len(os.sched_getaffinity(0)) // 2))')  # the cores split in 2
grep -Eq "^ +threads: $want_threads\$" sw2/attention/config.yaml \
  || { grep threads sw2/attention/config.yaml; fail "parallel members did not get $want_threads threads each"; }
# A Slurm array with one task per member.
"$EMBER" sweep s.yaml --emit slurm --sbatch-option=--gres=gpu:1 >slurm.out || fail "--emit slurm failed"
grep -q -- "#SBATCH --array=0-3" sw/sweep.sbatch || fail "sbatch array range wrong"
grep -q -- "#SBATCH --gres=gpu:1" sw/sweep.sbatch || fail "sbatch option missing"
grep -q 'sweep s.yaml --member "$SLURM_ARRAY_TASK_ID"' sw/sweep.sbatch || fail "sbatch does not run one member per task"
# One member alone (what each task of the Slurm array runs): it trains and is evaluated, no other.
sed -e 's/^out: sw/out: sw5/' -e 's/train.steps: 20/train.steps: 4, optim.warmup_steps: 2/' \
  -e 's/^evals: .*/evals: [perplexity]/' s.yaml >s5.yaml
one=$("$EMBER" sweep s5.yaml --dry-run | sed -n 's/^\[1\] \([^:]*\):.*/\1/p')
[ -n "$one" ] || fail "no member 1 in the dry run"
"$EMBER" sweep s5.yaml --member 1 >member.out 2>&1 || { cat member.out >&2; fail "sweep --member 1"; }
[ -f "sw5/$one/eval.json" ] || fail "--member 1 did not train and evaluate $one"
[ "$(find sw5 -mindepth 2 -maxdepth 2 -name metrics.jsonl | wc -l)" -eq 1 ] || fail "--member 1 trained other members"
expect_error "--member 9 is out of range: the sweep has 4 members (0 .. 3)" "$EMBER" sweep s5.yaml --member 9
# Each member through ember launch: 2 data-parallel ranks (the launcher's rank-prefixed output).
sed -e 's/^out: sw/out: sw3/' -e 's/^seeds: .*/seeds: [5]/' -e 's/train.steps: 20/train.steps: 4, optim.warmup_steps: 2/' \
  -e 's/^evals: .*/evals: [perplexity]/' -e 's/kind: \[attention, short_conv\]/kind: [attention]/' s.yaml >s3.yaml
"$EMBER" sweep s3.yaml --launch 2 --dry-run | grep -q "ember launch -n 2 -- .*ember train -c base.yaml" \
  || fail "--launch does not wrap the training command"
"$EMBER" sweep s3.yaml --launch 2 >launch.out 2>&1 || { cat launch.out >&2; fail "sweep --launch 2 failed"; }
grep -q "\[rank 0\] .*distributed: 2 ranks (2 per node) over gloo" launch.out \
  || { cat launch.out >&2; fail "the member did not train on 2 ranks"; }
[ -f sw3/attention/eval.json ] || fail "the launched member was not evaluated"
"$EMBER" sweep s3.yaml --launch 2 --emit slurm >/dev/null && grep -q -- '--member "$SLURM_ARRAY_TASK_ID" --launch 2' sw3/sweep.sbatch \
  || fail "--emit slurm drops --launch"
# Bad sweeps fail with the key named, before anything is created.
printf 'out: bad_out\nconfigs: [base.yaml]\ngrid: {model.d_modl: [32]}\n' >bad.yaml
expect_error "--set model.d_modl=32: unknown key 'model.d_modl' (did you mean 'model.d_model'?)" "$EMBER" sweep bad.yaml
[ ! -e bad_out ] || fail "a bad sweep created its output directory"
printf 'out: x\nseed: [1]\ngrid: {train.steps: [5]}\n' >typo.yaml
expect_error "typo.yaml: seed: unknown key (did you mean 'seeds'?)" "$EMBER" sweep typo.yaml
expect_error "not found" "$EMBER" sweep missing.yaml
expect_error "report: --baseline 'lev' is none of the members" "$EMBER" report sw/attention_seed1 --baseline lev
for bad in "seeds: [1.5]|seeds: '1.5' is not an integer" "seeds: [1, 1]|seeds: seed 1 is listed twice" \
  "eval_batches: many|eval_batches: 'many' is not an integer" "eval_batches: -1|eval_batches: must be >= 0"; do
  printf 'out: x\ngrid: {train.steps: [5]}\n%s\n' "${bad%%|*}" >b.yaml
  expect_error "b.yaml: ${bad#*|}" "$EMBER" sweep b.yaml --dry-run
done
printf 'out: x\nmembers: [{name: ".."}]\n' >dots.yaml
expect_error "a member named '..' would not be a directory of its own under x" "$EMBER" sweep dots.yaml --dry-run
# A baseline that fails costs the others nothing: they are reported (against the first member),
# and the failure is named. (The sweep above with a broken baseline added after its member: that
# member, finished, is skipped rather than trained again; its report is removed, to be rewritten.)
cp s3.yaml s4.yaml
printf 'members: [{name: broken, set: {data.train: [nowhere/train_*.bin]}}]\nbaseline: broken\n' >>s4.yaml
sed -i '/^baseline: attention$/d' s4.yaml
rm sw3/report.csv sw3/report.md
rc=0; "$EMBER" sweep s4.yaml >s4.out 2>s4.err || rc=$?
[ "$rc" -ne 0 ] || fail "a sweep with a failed member must exit non-zero"
grep -q "== attention: complete, skipped" s4.out || { cat s4.out >&2; fail "the finished member was trained again"; }
grep -q "member(s) failed: broken" s4.err || { cat s4.err >&2; fail "the failed baseline is not named"; }
grep -q "the baseline 'broken' has no finished run" s4.err || { cat s4.err >&2; fail "no warning for the baseline"; }
[ -f sw3/report.csv ] && grep -q "^attention," sw3/report.csv || fail "the finished member was not reported"
grep -q "1 member(s) have no results and are not in the table: broken (failed)" sw3/report.md \
  || fail "report.md does not name the member without results"
# A glob over a sweep's folder passes over its logs/ (with a note); validation numbers over
# different token counts (the last logged evaluation against eval.json's) are flagged.
"$EMBER" report sw2/*/ >glob.md 2>glob.err || { cat glob.err >&2; fail "report over a sweep folder's glob"; }
grep -q "skipping sw2/logs/ (not a run directory)" glob.err || { cat glob.err >&2; fail "logs/ not passed over"; }
cp -r sw/attention_seed1 logged_only && rm logged_only/eval.json
"$EMBER" report sw/attention_seed1 logged_only >mixed.md 2>mixed.err || fail "report of mixed evaluations"
grep -q "warning: validation numbers come from evaluations of different sizes" mixed.err || { cat mixed.err >&2; fail "not flagged"; }
grep -q "^\*\*Warning:\*\* validation numbers" mixed.md || fail "report.md does not carry the warning"
# Every sweep file shipped in sweeps/ reads and its members' configs resolve.
for f in "$EMBER_SOURCE_DIR"/configs/sweeps/*.yaml; do
  (cd "$EMBER_SOURCE_DIR" && "$EMBER" sweep "$f" --dry-run >/dev/null) || fail "$f does not resolve"
done
echo "sweep and report OK"
