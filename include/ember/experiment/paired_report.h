// The report's paired differences against the baseline (docs/experiments.md, "Paired
// differences"): per member, on the seeds it shares with the baseline, each metric's per-seed
// differences, their mean, a 95% Student t interval and the seeds that agree in sign; an interval
// that contains 0 is printed as "not resolved".
#pragma once
#include <string>

#include "ember/experiment/run_report.h"

namespace ember {

// Fills each row's common_seeds and paired (every member but the baseline) and its seed rows'
// diffs, then adjusts each metric's p values across the members (report.correction). A metric is
// paired when every common seed's run of both members has it.
void pair_with_baseline(Report& report);

// The sentence of report.md that says how p values were corrected for several members.
std::string correction_sentence(const Report& report);

// The "Paired differences against <baseline>" section of report.md.
std::string paired_markdown(const Report& report);

}  // namespace ember
