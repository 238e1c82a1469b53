"""torch.ops.ember.titans_memory (chunk-parallel) against ember's token-by-token oracle operator and a
plain PyTorch recurrence whose inner gradients come from autograd (reference.py), in float64."""
import pytest
import torch

import ember
import reference


def memory_inputs(B=2, H=2, T=11, dh=4, m=6, dtype=torch.float64):
    q, k, v = (torch.randn(B, H, T, dh, dtype=dtype) for _ in range(3))
    theta = 0.3 * torch.rand(B, H, T, dtype=dtype)
    eta, alpha = 0.9 * torch.rand(B, H, T, dtype=dtype), 0.1 * torch.rand(B, H, T, dtype=dtype)
    w1, w2 = 0.5 * torch.randn(B, H, dh, m, dtype=dtype), 0.5 * torch.randn(B, H, m, dh, dtype=dtype)
    state = ember.MemoryState(w1, w2, torch.zeros_like(w1), torch.zeros_like(w2))
    return (q, k, v, theta, eta, alpha), state


@pytest.mark.parametrize("retrieval", ["after", "before", "chunk"])
@pytest.mark.parametrize("chunk,clip", [(1, 0.0), (4, 0.0), (4, 0.5), (16, 1.0)])
def test_the_chunked_memory_equals_the_recurrence(retrieval, chunk, clip):
    inputs, state = memory_inputs()
    y, after = ember.titans_memory(*inputs, state, chunk, retrieval, clip)
    y_oracle, *after_oracle = torch.ops.ember.titans_memory_reference(*inputs, *state, chunk, retrieval, clip)
    y_ref, after_ref = reference.titans_memory(*inputs, state.w1, state.w2, chunk, retrieval, clip)
    torch.testing.assert_close(y, y_oracle, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(y, y_ref, rtol=1e-10, atol=1e-12)
    for ours, oracle, ref in zip(after, after_oracle, after_ref):
        torch.testing.assert_close(ours, oracle, rtol=1e-10, atol=1e-12)
        torch.testing.assert_close(ours, ref, rtol=1e-10, atol=1e-12)


def linear_state(B=2, H=2, dh=4, dtype=torch.float64):
    w = 0.5 * torch.randn(B, H, dh, dh, dtype=dtype)
    empty = torch.zeros(B, H, 0, dh, dtype=dtype)
    return ember.MemoryState(w, empty, torch.zeros_like(w), empty.clone())


@pytest.mark.parametrize("form", ["mlp", "linear"])
@pytest.mark.parametrize("residual", [True, False])
@pytest.mark.parametrize("step", ["plain", "normalized"])
@pytest.mark.parametrize("chunk,retrieval", [(1, "after"), (4, "before"), (16, "chunk")])
def test_every_memory_rule_matches_the_token_loop(form, residual, step, chunk, retrieval):
    inputs, state = memory_inputs()
    if form == "linear":
        state = linear_state()
    y, after = ember.titans_memory(*inputs, state, chunk, retrieval, 0.0, residual, step)
    y_oracle, *after_oracle = torch.ops.ember.titans_memory_reference(*inputs, *state, chunk, retrieval, 0.0,
                                                                      residual, step)
    torch.testing.assert_close(y, y_oracle, rtol=1e-10, atol=1e-12)
    for ours, oracle in zip(after, after_oracle):
        torch.testing.assert_close(ours, oracle, rtol=1e-10, atol=1e-12)


def test_the_linear_normalised_memory_is_the_delta_rule():
    # No residual, chunk 1, no momentum or forgetting: W_t = W_{t-1} - theta_t k_t^T (k_t W_{t-1} - v_t) / |k_t|^2,
    # and each token reads q_t W_t (DeltaNet, Schlag et al. 2021; Yang et al. 2024), written out here.
    (q, k, v, theta, _, _), _ = memory_inputs(T=9)
    state = linear_state()
    zeros = torch.zeros_like(theta)
    y, after = ember.titans_memory(q, k, v, theta, zeros, zeros, state, 1, "after", 0.0, False, "normalized")
    w = state.w1.clone()
    for t in range(q.shape[2]):
        kt, vt = k[:, :, t], v[:, :, t]
        error = torch.einsum("bhi,bhij->bhj", kt, w) - vt
        w = w - (theta[:, :, t] / kt.pow(2).sum(-1))[..., None, None] * torch.einsum("bhi,bhj->bhij", kt, error)
        torch.testing.assert_close(y[:, :, t], torch.einsum("bhi,bhij->bhj", q[:, :, t], w), rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(after.w1, w, rtol=1e-10, atol=1e-12)


def test_the_module_builds_a_linear_memory_that_learns_its_init():
    memory = ember.TitansMemory(heads=2, head_dim=4, hidden=6, chunk=4, form="linear", residual=False,
                                step="normalized").double()
    inputs, _ = memory_inputs()
    y, after = memory(*inputs)
    assert after.w1.shape == (2, 2, 4, 4) and after.w2.shape == (2, 2, 0, 4)
    y.pow(2).sum().backward()
    assert memory.w1.grad is not None and memory.w1.grad.abs().sum() > 0
    assert [name for name, _ in memory.named_parameters()] == ["w1"]


def test_a_sequence_split_in_two_calls_continues_its_state():
    inputs, state = memory_inputs(T=12)
    whole, _ = ember.titans_memory(*inputs, state, 4, "after", 1.0)
    first, mid = ember.titans_memory(*(x[:, :, :8] for x in inputs), state, 4, "after", 1.0)
    second, _ = ember.titans_memory(*(x[:, :, 8:] for x in inputs), mid, 4, "after", 1.0)
    torch.testing.assert_close(torch.cat([first, second], 2), whole, rtol=1e-12, atol=1e-12)


def test_gradcheck_through_the_memory_and_compile():
    inputs, state = memory_inputs(B=1, H=1, T=5, dh=2, m=3)
    leaves = [x.clone().requires_grad_() for x in (*inputs, state.w1, state.w2)]

    def run(q, k, v, theta, eta, alpha, w1, w2):
        st = ember.MemoryState(w1, w2, torch.zeros_like(w1), torch.zeros_like(w2))
        return ember.titans_memory(q, k, v, theta, eta, alpha, st, 2, "after", 0.0)[0]

    assert torch.autograd.gradcheck(run, leaves)
    memory = ember.TitansMemory(heads=2, head_dim=4, hidden=6, chunk=4).float()
    x = [t.float() for t in memory_inputs()[0]]
    eager = memory(*x)[0]
    torch.testing.assert_close(torch.compile(memory, fullgraph=True)(*x)[0], eager, rtol=1e-4, atol=1e-5)


def test_bad_inputs_are_named():
    inputs, state = memory_inputs()
    with pytest.raises(ValueError, match="retrieval 'later'"):
        ember.titans_memory(*inputs, state, 4, "later")
    with pytest.raises(RuntimeError, match="theta, eta, alpha must be"):
        ember.titans_memory(*inputs[:3], inputs[3][:, :, :2], *inputs[4:], state, 4)
    with pytest.raises(RuntimeError, match="chunk must be positive"):
        ember.titans_memory(*inputs, state, 0)
    with pytest.raises(ValueError, match="step 'exact'"):
        ember.titans_memory(*inputs, state, 4, step="exact")
    with pytest.raises(ValueError, match="form 'deep'"):
        ember.TitansMemory(heads=2, head_dim=4, hidden=6, form="deep")
    bad_linear = linear_state()._replace(w1=torch.zeros(2, 2, 4, 6, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="a linear memory"):
        ember.titans_memory(*inputs, bad_linear._replace(s1=torch.zeros(2, 2, 4, 6, dtype=torch.float64)), 4)
