#!/usr/bin/env python3
"""One-off: the run summaries of an experiment whose run directories were not kept, rebuilt from the
per-seed rows of its report.csv (row == seed: one run's final values, written exactly).

    python3 experiments/summaries_from_report_csv.py experiments/leviathan-cpu

writes experiments/leviathan-cpu/runs/<run>/summary.json per row, as `ember report --summaries`
writes them. What report.csv does not hold is not invented: the buckets' token counts are null (the
bucket_ppl figure needs them and is not redrawn), the capacity histogram is absent, tokens_per_s
has the CSV's 6 significant digits, and val_source is "eval.json" (every sweep run is evaluated on
the whole validation split). Used once, for leviathan-cpu and tapered-cpu (2026-12-07).
"""
import csv
import json
import os
import sys


def number(text):
    return float(text) if text != "" else None


def bucket_ranges(header):
    """The frequency buckets' ranges, rarest first: the 'ppl <range>' value columns."""
    return [c[4:] for c in header if c.startswith("ppl ") and c + " diff" in header]


def summary(row, header, varied, ranges):
    s = {
        "run": row["runs"],
        "seed": int(row["seed"]),
        "settings": {k: row[k] for k in varied},
        "params": float(row["params"]),
        "tokens": float(row["tokens"]),
        "tokens_per_s": float(row["tokens_per_s"]),
        "train_loss": float(row["train_loss"]),
        "val_loss": number(row["val_loss"]),
        "val_ppl": number(row["val_ppl"]),
        "val_tokens": number(row["val_tokens"]),
        "val_source": "eval.json",
    }
    if ranges:
        s["buckets"] = [{"range": r, "tokens": None, "perplexity": float(row["ppl " + r])} for r in ranges]
        rare = [r for r in ranges if row["ppl " + r] == row["rare_ppl"]]
        assert len(rare) == 1, (row["runs"], rare)
        assert row["frequent_ppl"] == row["ppl " + ranges[-1]], row["runs"]
        s["rare_bucket"] = rare[0]
    if "input epsilon" in header:
        s["capacity"] = {"mu": float(row["input mu"]), "epsilon": float(row["input epsilon"])}
    return s


def main(experiment):
    with open(os.path.join(experiment, "report.csv"), newline="") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames
        rows = [r for r in reader if r["row"] == "seed"]
    varied = header[1:header.index("seeds")]
    assert not any(c.endswith(" acc") for c in header), "tasks: not handled"
    ranges = bucket_ranges(header)
    for row in rows:
        name = os.path.basename(os.path.normpath(row["runs"]))
        out = os.path.join(experiment, "runs", name, "summary.json")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "w") as f:
            f.write(json.dumps(summary(row, header, varied, ranges), indent=2, sort_keys=True) + "\n")
    print(f"{experiment}: {len(rows)} summaries")


if __name__ == "__main__":
    for experiment in sys.argv[1:]:
        main(experiment)
