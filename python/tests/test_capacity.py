"""ember.epsilon and ember.capacity against numpy over every pair and the formulas of docs/capacity.md."""
import math

import numpy as np
import pytest
import torch

import ember


def pairwise(matrix):
    x = matrix.numpy().astype(np.float64)
    x = x[np.linalg.norm(x, axis=1) > 0]
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    c = (x @ x.T)[np.triu_indices(len(x), 1)]
    return c, len(x)


def test_exact_and_moments_equal_numpy_over_every_pair():
    matrix = torch.randn(300, 24) + 0.3  # a shared direction, so mu is well above 0
    matrix[7] = 0  # a zero row is dropped
    c, rows = pairwise(matrix)
    for method in ("exact", "moments"):
        e = ember.epsilon(matrix, method=method, block=64)
        assert e.rows == rows and e.pairs == len(c)
        assert e.mu == pytest.approx(c.mean(), rel=1e-6, abs=1e-9)  # rows are normalised in fp32
        assert e.sigma == pytest.approx(c.std(ddof=1), rel=1e-6)
        assert e.epsilon == pytest.approx(c.mean() + 2 * c.std(ddof=1), rel=1e-6)
    exact = ember.epsilon(matrix)
    assert exact.min_cosine == pytest.approx(c.min(), abs=1e-6) and exact.max_cosine == pytest.approx(c.max(), abs=1e-6)
    assert math.isnan(ember.epsilon(matrix, method="moments").min_cosine)


def test_sampled_interval_holds_the_exact_value():
    matrix = torch.randn(400, 16) + 0.2
    exact = ember.epsilon(matrix).epsilon
    sampled = ember.epsilon(matrix, method="sampled", sample_pairs=40000, seed=3)
    assert sampled.ci_low < exact < sampled.ci_high
    assert sampled.ci_high - sampled.ci_low < 0.02


@pytest.mark.parametrize("d,eps", [(768, 0.3), (4096, 0.0645), (64, 0.15), (128, 0.05)])
def test_bounds_equal_the_closed_forms(d, eps):
    C, a, b, c = 0.45809143, 1.0668005, 1.44738666, 0.97197234
    cap = ember.capacity(d, eps)
    assert cap.ln_full == pytest.approx((math.log(d) + (eps ** 2 * d ** c / C) ** (1 / b)) / a, rel=1e-12)
    assert cap.ln_single == pytest.approx(math.log(d) + d * eps ** 2 / 1.293, rel=1e-12)
    assert cap.ln_jl == pytest.approx(d * eps ** 2 / 8, rel=1e-12)
    assert cap.ln_jl_random == pytest.approx(d * eps ** 2 / 3.029, rel=1e-12)
    assert cap.cls == ("2" if eps < 0.1 else "1" if eps > 0.2 else "indeterminate")
    assert cap.log10() == pytest.approx(cap.ln_full / math.log(10))


def test_undefined_epsilon_and_bad_input():
    assert math.isnan(ember.capacity(64, 1.5).ln_full) and ember.capacity(64, 1.5).cls == "1"
    with pytest.raises(ValueError, match="method 'fast'"):
        ember.epsilon(torch.randn(5, 3), method="fast")
    with pytest.raises(RuntimeError, match="NaN"):
        ember.epsilon(torch.full((5, 3), float("nan")))
    with pytest.raises(FileNotFoundError, match="not a tensor"):
        ember.epsilon("no/such/file.txt")
