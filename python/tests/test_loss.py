"""torch.ops.ember.linear_cross_entropy against F.cross_entropy of the materialised logits."""
import pytest
import torch
import torch.nn.functional as F

import ember


def loss_inputs(N=37, D=8, V=29, dtype=torch.float64):
    h = torch.randn(N, D, dtype=dtype, requires_grad=True)
    w = torch.randn(V, D, dtype=dtype, requires_grad=True)
    return h, w, torch.randint(0, V, (N,))


@pytest.mark.parametrize("chunk_rows", [0, 1, 5, 37, 100])
@pytest.mark.parametrize("scale", [1.0, 0.37])
def test_loss_and_gradients_equal_the_materialised_ones_in_float64(chunk_rows, scale):
    h, w, y = loss_inputs()
    ours = ember.linear_cross_entropy(h, w, y, scale, chunk_rows)
    gh, gw = torch.autograd.grad(3.0 * ours, (h, w))
    want = F.cross_entropy(scale * h @ w.T, y)
    rh, rw = torch.autograd.grad(3.0 * want, (h, w))
    torch.testing.assert_close(ours, want, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(gh, rh, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(gw, rw, rtol=1e-10, atol=1e-12)


def test_gradcheck_and_compile():
    h, w, y = loss_inputs(N=6, D=3, V=5)
    assert torch.autograd.gradcheck(lambda a, b: ember.linear_cross_entropy(a, b, y, 0.7, 4), (h, w))
    head = ember.LinearCrossEntropy(8, 29)
    x, t = torch.randn(2, 5, 8), torch.randint(0, 29, (2, 5))
    torch.testing.assert_close(torch.compile(head, fullgraph=True)(x, t), head(x, t), rtol=1e-6, atol=1e-6)


def test_float32_and_bf16_autocast_follow_the_materialised_loss():
    h, w, y = loss_inputs(dtype=torch.float32)
    torch.testing.assert_close(ember.linear_cross_entropy(h, w, y), F.cross_entropy(h @ w.T, y), rtol=1e-5, atol=1e-5)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ours = ember.linear_cross_entropy(h, w, y)
        want = F.cross_entropy((h @ w.T).float(), y)
    assert ours.dtype == torch.float32
    torch.testing.assert_close(ours, want, rtol=1e-2, atol=1e-2)


def test_bad_shapes_are_named():
    h, w, y = loss_inputs()
    with pytest.raises(RuntimeError, match="hidden \\[N, D\\] and weight \\[V, D\\]"):
        ember.linear_cross_entropy(h, w[:, :3], y)
    with pytest.raises(RuntimeError, match="targets must be int64"):
        ember.linear_cross_entropy(h, w, y[:5])


def test_without_a_gradient_only_the_loss_is_formed():
    h, w, y = loss_inputs()
    want = ember.linear_cross_entropy(h, w, y, 0.5).detach()
    for context, operands in ((torch.no_grad(), (h, w)), (torch.enable_grad(), (h.detach(), w.detach()))):
        with context, torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            loss = ember.linear_cross_entropy(*operands, y, 0.5)
        names = {e.name for e in prof.events()}
        assert "ember::linear_cross_entropy_loss" in names and "ember::linear_cross_entropy" not in names, names
        torch.testing.assert_close(loss, want, rtol=1e-12, atol=1e-12)
        assert not loss.requires_grad


def test_targets_outside_the_vocabulary_are_index_errors():
    h, w, y = loss_inputs()
    for bad in (29, -1):
        wrong = y.clone()
        wrong[3] = bad
        with pytest.raises(IndexError, match=f"target {bad} is out of range \\[0, 29\\)"):
            ember.linear_cross_entropy(h, w, wrong)
        with torch.no_grad(), pytest.raises(IndexError, match="out of range"):
            ember.linear_cross_entropy(h, w, wrong)
