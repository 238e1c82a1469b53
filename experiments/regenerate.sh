#!/usr/bin/env bash
# Rewrites every committed experiment report from the per-run results kept in git:
#
#   EMBER=build/tools/ember bash experiments/regenerate.sh
#
# - leviathan-cpu, tapered-cpu: report.md and report.csv from runs/<member>_seed<k>/summary.json
#   (`ember report SUMMARY... --out`; the members in the order of the original command);
# - ladder-cpu: ladder.md and ladder_{fits,gaps,points}.csv from ladder_points.csv
#   (`ember ladder report --points`).
# These come out byte for byte as committed (tests/integration/report_regenerate.sh checks it).
#
# Figures are not part of that. The summaries hold final values only, so of the figures only
# val_loss_bars, val_loss_diff and ladder.png are redrawn (report.md links those); the loss and
# epsilon curves, bucket_ppl (its labels need the buckets' token counts) and cosine_histogram stay
# as drawn from the run directories, which were not kept. mixers-cpu has no generated report.
set -euo pipefail
EMBER="${EMBER:?set EMBER to the ember binary, e.g. EMBER=build/tools/ember}"
EMBER="$(cd "$(dirname "$EMBER")" && pwd)/$(basename "$EMBER")"
cd "$(dirname "${BASH_SOURCE[0]}")/.."  # the ladder's configs are paths from the repository root

report() {  # experiment baseline member...: the members in the order of the table, seeds 1-5
  local experiment="$1" baseline="$2" member seed
  shift 2
  local runs=()
  for member in "$@"; do
    for seed in 1 2 3 4 5; do runs+=("experiments/$experiment/runs/${member}_seed$seed"); done
  done
  "$EMBER" report "${runs[@]}" --baseline "$baseline" --out "experiments/$experiment" >/dev/null
  echo "experiments/$experiment: report.md, report.csv"
}

report leviathan-cpu tied tied untied albert flat_mlp factored_mlp lev
report tapered-cpu uniform uniform linear cosine sigmoid cosine_1.25-0.75 cosine_1.75-0.25
"$EMBER" ladder report experiments/ladder-cpu/ladder.yaml --points experiments/ladder-cpu/ladder_points.csv \
  --out experiments/ladder-cpu >/dev/null
echo "experiments/ladder-cpu: ladder.md, ladder_fits.csv, ladder_gaps.csv, ladder_points.csv"
