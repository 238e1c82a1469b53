"""Representational capacity of embedding geometry (ember's docs/capacity.md): epsilon = mu + 2 sigma of the
cosine similarity over every pair of rows of an embedding matrix, and the capacity bounds derived from it."""
import math
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
from safetensors.torch import load_file

from . import runs
from .lev import LEVEmbedding

METHODS = ("exact", "moments", "sampled")
INPUT_NAMES = ("model.embed_tokens.weight", "transformer.wte.weight", "embed_tokens.weight", "tok_embeddings.weight",
               "embedding.weight")


class Epsilon(NamedTuple):
    mu: float
    sigma: float
    min_cosine: float  # NaN for method 'moments'
    max_cosine: float
    ci_low: float  # method 'sampled': the 95% interval of epsilon (NaN otherwise)
    ci_high: float
    pairs: int
    rows: int  # non-zero rows used

    @property
    def epsilon(self):
        return self.mu + 2.0 * self.sigma


class Capacity(NamedTuple):
    """The class rule and each bound on k as a natural logarithm (capacities overflow doubles); NaN where
    epsilon is outside (0, 1] and no formula applies."""
    cls: str  # "2" (near-orthogonal), "1" or "indeterminate"
    ln_full: float  # the paper's fully parameterised form (the headline)
    ln_single: float  # k <= d exp(d eps^2 / 1.293)
    ln_jl: float  # k <= exp(d eps^2 / 8)
    ln_jl_random: float  # k <= exp(d eps^2 / 3.029)

    def log10(self, bound="full"):
        return getattr(self, "ln_" + bound) / math.log(10.0)


def input_embedding(source, tensor=None):
    """The input embedding matrix of a tensor, a .safetensors / .npy file, or an ember run or checkpoint
    directory (a LEV run's table is generated, as `ember capacity` does)."""
    if isinstance(source, torch.Tensor):
        return source
    path = Path(source)
    if path.suffix == ".npy":
        return torch.from_numpy(np.load(path))
    if path.suffix == ".safetensors":
        tensors = load_file(str(path))
        names = [tensor] if tensor else [n for n in INPUT_NAMES if n in tensors]
        if not names or names[0] not in tensors:
            raise KeyError(f"ember: {path} has no tensor {tensor or ' / '.join(INPUT_NAMES)}")
        return tensors[names[0]]
    if path.is_dir():
        kind = runs.run_config(path)["model"]["embedding"]["kind"]
        if kind == "lev":
            with torch.no_grad():
                return LEVEmbedding.from_run(path).table()
        tensors = runs.model_tensors(path, "embedding.")
        if kind in ("tied", "untied") and "weight" in tensors:
            return tensors["weight"]
        raise ValueError(f"ember: the {kind} embedding of {path} is not materialised from Python; "
                         f"use `ember capacity {path}`")
    raise FileNotFoundError(f"ember: {source} is not a tensor, .safetensors, .npy or run directory")


def epsilon(source, method="exact", block=4096, sample_pairs=1_000_000, seed=0, tensor=None):
    """mu, sigma and epsilon = mu + 2 sigma of the pairwise cosines of the rows of `source` (see
    input_embedding), zero rows dropped; 'exact' streams the Gram matrix in float64 sums, 'moments' uses the
    d x d Gram identity, 'sampled' draws random pairs with a 95% interval."""
    if method not in METHODS:
        raise ValueError(f"epsilon: method '{method}' is not one of {', '.join(METHODS)}")
    matrix = input_embedding(source, tensor)
    return Epsilon(*torch.ops.ember.epsilon(matrix.detach(), method, int(block), int(sample_pairs), int(seed)))


def capacity(d, eps):
    """The capacity class and bounds for embedding width d at epsilon eps."""
    return Capacity(*torch.ops.ember.capacity_bounds(float(d), float(eps)))
