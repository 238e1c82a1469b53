"""torch.ops.ember.linear_cross_entropy against F.cross_entropy of the materialised logits, ignore_index
included."""
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


@pytest.mark.parametrize("chunk_rows", [0, 1, 5, 7, 100])
@pytest.mark.parametrize("ignore_index", [-100, 3])
def test_ignore_index_equals_f_cross_entropy_in_float64(chunk_rows, ignore_index):
    h, w, y = loss_inputs()
    y = y.masked_fill(y == ignore_index, 4)  # only the rows set here are ignored
    y[:5] = ignore_index  # at 5 rows a chunk, the first chunk wholly
    y[11] = y[30] = ignore_index
    ours = ember.linear_cross_entropy(h, w, y, 0.37, chunk_rows, ignore_index)
    gh, gw = torch.autograd.grad(3.0 * ours, (h, w))
    want = F.cross_entropy(0.37 * h @ w.T, y, ignore_index=ignore_index)
    rh, rw = torch.autograd.grad(3.0 * want, (h, w))
    torch.testing.assert_close(ours, want, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(gh, rh, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(gw, rw, rtol=1e-10, atol=1e-12)
    with torch.no_grad():
        torch.testing.assert_close(ember.linear_cross_entropy(h, w, y, 0.37, chunk_rows, ignore_index), want.detach(),
                                   rtol=1e-12, atol=1e-12)
    head = ember.LinearCrossEntropy(8, 29, 0.37, chunk_rows, ignore_index).double()
    with torch.no_grad():
        head.weight.copy_(w)
    torch.testing.assert_close(head(h, y), want, rtol=1e-12, atol=1e-12)


def test_an_all_ignored_batch_has_zero_loss_and_gradients():
    h, w, y = loss_inputs()
    y = torch.full_like(y, -100)
    ours = ember.linear_cross_entropy(h, w, y, 1.0, 5)
    gh, gw = torch.autograd.grad(ours, (h, w))
    assert ours.item() == 0.0 and not gh.any() and not gw.any()
    assert F.cross_entropy(h @ w.T, y).isnan()  # where PyTorch's mean is 0 / 0
    with torch.no_grad():
        assert ember.linear_cross_entropy(h, w, y).item() == 0.0


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
    ember.linear_cross_entropy(h, w, y.masked_fill(y == 2, -100))  # the ignore index is no error
    for bad, ignore_index in ((29, -100), (-1, -100), (-100, 0)):  # with another ignore index, -100 is one
        wrong = y.clone()
        wrong[3] = bad
        with pytest.raises(IndexError, match=f"target {bad} is out of range \\[0, 29\\)"):
            ember.linear_cross_entropy(h, w, wrong, ignore_index=ignore_index)
        with torch.no_grad(), pytest.raises(IndexError, match="out of range"):
            ember.linear_cross_entropy(h, w, wrong, ignore_index=ignore_index)
