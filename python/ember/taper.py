"""Tapered MLP widths (ember's docs/tapered.md): d_ff(l) = d_end + (d_start - d_end) f(l / (L-1)) with f
linear, cosine or sigmoid, the first and last widths round(start d_base) and round(end d_base), the interior
rounded to a multiple, layers l and L-1-l summing to 2 d_base: the uniform stack's parameters and FLOPs,
exactly. Or equal groups of layers with given width factors."""
import torch

SCHEDULES = ("uniform", "linear", "cosine", "sigmoid", "groups")


def taper_widths(schedule, n_layers, d_base, start=1.5, end=0.5, steepness=10.0, multiple_of=16,
                 groups=(1.5, 1.0, 0.5)):
    """One MLP width per layer (ember's model/taper.h); a ValueError-like RuntimeError names the setting that
    cannot keep the budget."""
    return list(torch.ops.ember.taper_widths(schedule, int(n_layers), int(d_base), float(start), float(end),
                                             float(steepness), int(multiple_of), [float(g) for g in groups]))
