"""ember.taper_widths against the schedule's closed form and against the widths `ember inspect` gives
the shipped tapered configs."""
import json
import math

import pytest

import ember
from conftest import REPO, run_ember


def profile(schedule, t, k=10.0):
    """f(t): f(0) = 1, f(1) = 0 (docs/tapered.md)."""
    if schedule == "linear":
        return 1 - t
    if schedule == "cosine":
        return 0.5 * (1 + math.cos(math.pi * t))
    s = lambda x: 1 / (1 + math.exp(-x))
    return (s(-k * (t - 0.5)) - s(-k / 2)) / (s(k / 2) - s(-k / 2))


@pytest.mark.parametrize("schedule", ["linear", "cosine", "sigmoid"])
@pytest.mark.parametrize("layers,d_base,q", [(12, 1536, 16), (21, 5376, 64), (7, 640, 32)])
def test_widths_follow_the_schedule_and_keep_the_budget(schedule, layers, d_base, q):
    widths = ember.taper_widths(schedule, layers, d_base, multiple_of=q)
    assert sum(widths) == layers * d_base  # the uniform stack's parameters and FLOPs, exactly
    assert widths[0] == round(1.5 * d_base) and widths[-1] == round(0.5 * d_base)
    for l in range(layers):
        assert widths[l] + widths[layers - 1 - l] == 2 * d_base
        ideal = 0.5 * d_base + d_base * profile(schedule, l / (layers - 1))
        assert abs(widths[l] - ideal) <= q  # rounded to the multiple, or pinned
        assert l in (0, layers - 1) or widths[l] % q == 0 or layers % 2 == 1 and l == layers // 2


def test_groups_and_uniform():
    assert ember.taper_widths("uniform", 4, 256) == [256] * 4
    assert ember.taper_widths("groups", 6, 256, groups=(1.5, 1.0, 0.5)) == [384, 384, 256, 256, 128, 128]


def test_the_widths_of_the_shipped_configs_are_the_cli_s():
    for schedule in ("linear", "cosine", "sigmoid"):
        out = json.loads(run_ember("inspect", "--json", "-c", REPO / "configs/tapered/1.3b.yaml",
                                   REPO / f"configs/tapered/{schedule}.yaml"))
        cli = [layer["d_ff"] for layer in out["layers"]]
        assert ember.taper_widths(schedule, 21, 5376, multiple_of=64) == cli


def test_budget_breaking_settings_are_refused_with_their_values():
    with pytest.raises(RuntimeError, match="start"):
        ember.taper_widths("cosine", 12, 1536, start=1.5, end=0.7)
    with pytest.raises(RuntimeError, match="schedule 'zigzag' is not one of uniform, linear, cosine, sigmoid, groups"):
        ember.taper_widths("zigzag", 12, 1536)
