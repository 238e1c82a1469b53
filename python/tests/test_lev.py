"""torch.ops.ember.lev_spline and ember.LEVEmbedding against plain PyTorch (reference.py) and ember's
ATen reference operator; gradcheck in float64; torch.compile; every option of model.embedding.lev."""
import pytest
import torch

import ember
import reference


def spline_inputs(N=13, h=3, ds=5, kappa=7, r=4, dtype=torch.float64):
    u = torch.rand(N, h, ds, dtype=dtype)
    S = 1.0 + 0.3 * torch.randn(h, ds, kappa, r, dtype=dtype)
    return u, S


@pytest.mark.parametrize("normalize", [True, False])
def test_spline_equals_the_product_multiplied_out_in_float64(normalize):
    u, S = spline_inputs()
    ours = ember.lev_spline(u, S, normalize)
    torch.testing.assert_close(ours, reference.spline_product(u, S, normalize), rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(ours, torch.ops.ember.lev_spline_reference(u, S, normalize), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("normalize", [True, False])
def test_spline_gradients_pass_gradcheck_in_float64(normalize):
    u, S = spline_inputs(N=4, h=2, ds=3, kappa=5, r=3)
    u = (0.05 + 0.9 * u).requires_grad_()  # away from the knots' kinks, where B'' jumps
    S.requires_grad_()
    assert torch.autograd.gradcheck(lambda a, b: ember.lev_spline(a, b, normalize), (u, S), eps=1e-6, atol=1e-7)


def test_spline_in_float32_matches_float64_and_refuses_bad_shapes():
    u, S = spline_inputs()
    torch.testing.assert_close(ember.lev_spline(u.float(), S.float()), ember.lev_spline(u, S).float(),
                               rtol=2e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="expected u \\[N, h, d_s\\] and S \\[h, d_s, kappa, r\\]"):
        ember.lev_spline(u, S[:, :2])
    with pytest.raises(RuntimeError, match="at least 3 knots"):
        ember.lev_spline(u, S[:, :, :2].contiguous())


OPTIONS = [dict(), dict(squash="sigmoid_ln"), dict(normalize_basis=False), dict(learnable_knot_scale=True),
           dict(impl="reference"), dict(k=2, d_seed=16, heads=2, knots=5, rank=8)]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "defaults")
def test_the_generator_equals_its_equations_for_every_option(options):
    cfg = dict(k=3, d_seed=16, heads=2, knots=6, rank=4) | options
    module = ember.LEVEmbedding(300, 24, **cfg).double()
    if module.knot_scale is not None:
        with torch.no_grad():
            module.knot_scale.add_(torch.rand_like(module.knot_scale))  # off the fixed grid's value
    p = {k: v.detach() for k, v in module.state_dict().items()}
    want = reference.lev_table(p, 300, module.k, module.base, cfg.get("squash", "sigmoid_half_ln"),
                               cfg.get("normalize_basis", True))
    with torch.no_grad():
        torch.testing.assert_close(module.table(batch=77), want, rtol=1e-10, atol=1e-12)
        ids = torch.randint(0, 300, (3, 11))
        torch.testing.assert_close(module(ids), want[ids], rtol=1e-10, atol=1e-12)
    assert sum(p.numel() for p in module.parameters()) == ember.lev_parameter_count(300, 24, **{
        k: v for k, v in cfg.items() if k not in ("squash", "normalize_basis", "impl")})


def test_the_embedding_trains_and_compiles_to_the_same_output():
    module = ember.LEVEmbedding(500, 32, d_seed=16, heads=2, knots=6, rank=8)
    ids = torch.randint(0, 500, (4, 9))
    eager = module(ids)
    compiled = torch.compile(module, fullgraph=True)(ids)
    torch.testing.assert_close(compiled, eager, rtol=1e-5, atol=1e-6)
    eager.square().mean().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in module.parameters())


def test_bad_options_are_refused_with_their_names():
    with pytest.raises(ValueError, match="squash 'tanh'"):
        ember.LEVEmbedding(10, 4, squash="tanh")
    with pytest.raises(ValueError, match="learnable_knot_scale needs impl"):
        ember.LEVEmbedding(10, 4, learnable_knot_scale=True, impl="fused")
    with pytest.raises(ValueError, match="knots must be >= 3"):
        ember.LEVEmbedding(10, 4, knots=2)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_kernels_equal_the_cpu_ones():
    u, S = spline_inputs(dtype=torch.float32)
    torch.testing.assert_close(ember.lev_spline(u.cuda(), S.cuda()).cpu(), ember.lev_spline(u, S), rtol=1e-5, atol=1e-6)


def test_ids_outside_the_vocabulary_are_index_errors_as_in_nn_embedding():
    lev = ember.LEVEmbedding(1000, 16, d_seed=8, heads=2, knots=4, rank=3)
    ids = torch.tensor([[3, 999], [0, 5]])
    assert lev(ids).shape == (2, 2, 16)
    for bad in (1005, 1000, -1):  # 1005 has the digits of 5 in base 10: without the check, row 5
        with pytest.raises(IndexError, match=f"token id {bad} is out of range \\[0, 1000\\)"):
            lev(torch.tensor([[3, bad]]))
        with pytest.raises(IndexError):
            torch.nn.Embedding(1000, 16)(torch.tensor([bad]))  # the behaviour it follows
    with pytest.raises(IndexError):
        lev.generate(torch.tensor([1000]))
