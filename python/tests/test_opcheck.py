"""torch.library.opcheck over every tensor operator of the package on the CPU: the schema matches what
the kernels do (no undeclared mutation or aliasing), autograd is registered where gradients flow, and
the fake (shape-only) implementations agree with the kernels, also under AOT dispatch with dynamic
shapes. test_cuda.py runs the same cases on a GPU (bench/gpu_check.sh)."""
import pytest
import torch

import ember

f64 = torch.float64


def lev_args():
    u = (0.05 + 0.9 * torch.rand(5, 2, 3, dtype=f64)).requires_grad_()
    S = (1.0 + 0.3 * torch.randn(2, 3, 4, 3, dtype=f64)).requires_grad_()
    return u, S


def loss_args():
    h = torch.randn(9, 4, dtype=f64, requires_grad=True)
    w = torch.randn(7, 4, dtype=f64, requires_grad=True)
    y = torch.randint(0, 7, (9,))
    y[2] = y[5] = -100  # ignored
    return h, w, y, 0.7, 4, -100


# The sequences of cms_args and titans_args are a whole chunk and a part of one: opcheck checks what the
# operator declares (schema, autograd, fake shapes, AOT tracing), the same for any number of chunks, and
# its AOT checks trace every ATen op of every chunk (the equations are test_cms.py's and test_titans.py's).
def cms_args():
    u, teach = torch.randn(2, 4, 4, dtype=f64, requires_grad=True), torch.randn(2, 4, 4, dtype=f64)
    w_gate, w_up = (torch.randn(6, 4, dtype=f64, requires_grad=True) for _ in range(2))
    w_down = torch.randn(4, 6, dtype=f64, requires_grad=True)
    return u, teach, w_gate, w_up, w_down, 3, 0.1, False, 0.5


def titans_args():
    B, H, T, dh, m = 1, 2, 3, 3, 4
    q, k, v = (torch.randn(B, H, T, dh, dtype=f64, requires_grad=True) for _ in range(3))
    theta, eta, alpha = (0.3 * torch.rand(B, H, T, dtype=f64) for _ in range(3))
    w1, w2 = 0.5 * torch.randn(B, H, dh, m, dtype=f64), 0.5 * torch.randn(B, H, m, dh, dtype=f64)
    return q, k, v, theta, eta, alpha, w1, w2, torch.zeros_like(w1), torch.zeros_like(w2), 2, "after", 0.5, True, "plain"


def spline_backward_args():
    u, S = (t.detach() for t in lev_args())
    m = torch.ops.ember.lev_spline(u, S, True)
    return torch.randn_like(m), m, u, S, True


CASES = {
    "lev_spline": (lambda: (*lev_args(), True)),
    "lev_spline_backward": spline_backward_args,
    "lev_spline_reference": (lambda: (*lev_args(), True, None)),
    "linear_cross_entropy": loss_args,
    "linear_cross_entropy_loss": (lambda: tuple(a.detach() if torch.is_tensor(a) else a for a in loss_args())),
    "cms_level": cms_args,
    "titans_memory": titans_args,
    "titans_memory_reference": titans_args,
}


def tensor_ops():
    """Every operator in the ember namespace (as registered, not only those used so far) taking a tensor."""
    names = set()
    for schema in torch._C._jit_get_all_schemas():
        if schema.name.startswith("ember::") and any("Tensor" in str(a.type) for a in schema.arguments):
            names.add(schema.name.removeprefix("ember::"))
    return sorted(names)


def test_every_tensor_operator_has_a_case():
    # epsilon reads its matrix back into numbers (mu, sigma, ...): no fake or autograd to check
    assert sorted(CASES) == [n for n in tensor_ops() if n != "epsilon"], tensor_ops()


@pytest.mark.parametrize("name", sorted(CASES))
def test_opcheck(name):
    torch.library.opcheck(getattr(torch.ops.ember, name).default, CASES[name]())
