"""The operators and modules on a CUDA device against the same calls on the CPU (whose own tests compare
them with plain PyTorch): float64 to 1e-12 where the kernels are exact, float32 and bf16 autocast within
rounding, gradcheck on the device, and torch.compile(fullgraph=True) on the device. Skipped without a
CUDA device (absent hardware); bench/gpu_check.sh runs them on a GPU machine."""
import pytest
import torch
import torch.nn.functional as F

import ember
import reference
from test_cms import level_inputs
from test_opcheck import CASES
from test_lev import spline_inputs
from test_titans import memory_inputs

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
EXACT = dict(rtol=1e-12, atol=1e-13)


def on_device(*tensors):
    return [t.cuda() for t in tensors]


@pytest.mark.parametrize("normalize", [True, False])
def test_lev_spline_forward_and_backward_equal_the_cpu_in_float64(normalize):
    u, S = spline_inputs(N=300, h=4, ds=8, kappa=16, r=8)
    grad = torch.randn(300, 4, 8, dtype=torch.float64)
    cpu = [x.clone().requires_grad_() for x in (u, S)]
    gpu = [x.cuda().requires_grad_() for x in (u, S)]
    out_cpu, out_gpu = ember.lev_spline(*cpu, normalize), ember.lev_spline(*gpu, normalize)
    assert out_gpu.is_cuda
    torch.testing.assert_close(out_gpu.cpu(), out_cpu, **EXACT)
    torch.testing.assert_close(out_gpu.cpu(), reference.spline_product(u, S, normalize), **EXACT)
    for a, b in zip(torch.autograd.grad(out_gpu, gpu, grad.cuda()), torch.autograd.grad(out_cpu, cpu, grad)):
        torch.testing.assert_close(a.cpu(), b, rtol=1e-11, atol=1e-12)


def test_lev_spline_gradcheck_on_the_device():
    u, S = spline_inputs(N=4, h=2, ds=3, kappa=5, r=3)
    u = (0.05 + 0.9 * u).cuda().requires_grad_()
    S = S.cuda().requires_grad_()
    assert torch.autograd.gradcheck(lambda a, b: ember.lev_spline(a, b), (u, S), eps=1e-6, atol=1e-7)


def test_the_lev_embedding_on_the_device_equals_the_cpu_and_compiles():
    module = ember.LEVEmbedding(5000, 64, d_seed=32, heads=4, knots=8, rank=16)
    ids = torch.randint(0, 5000, (4, 33))
    cpu = module(ids)
    module.cuda()
    eager = module(ids.cuda())
    torch.testing.assert_close(eager.cpu(), cpu.detach(), rtol=1e-5, atol=1e-6)
    compiled = torch.compile(module, fullgraph=True)(ids.cuda())
    torch.testing.assert_close(compiled, eager, rtol=1e-5, atol=1e-6)
    eager.square().mean().backward()
    assert all(p.grad is not None and p.grad.is_cuda and p.grad.abs().sum() > 0 for p in module.parameters())


@pytest.mark.parametrize("chunk_rows", [0, 7])
def test_linear_cross_entropy_on_the_device_equals_the_materialised_loss(chunk_rows):
    h = torch.randn(61, 16, dtype=torch.float64, device="cuda", requires_grad=True)
    w = torch.randn(37, 16, dtype=torch.float64, device="cuda", requires_grad=True)
    y = torch.randint(0, 37, (61,), device="cuda")
    ours = ember.linear_cross_entropy(h, w, y, 0.5, chunk_rows)
    want = F.cross_entropy(0.5 * h @ w.T, y)
    torch.testing.assert_close(ours, want, **EXACT)
    for a, b in zip(torch.autograd.grad(ours, (h, w)), torch.autograd.grad(want, (h, w))):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)
    small = [torch.randn(n, 3, dtype=torch.float64, device="cuda", requires_grad=True) for n in (6, 5)]
    y_small = torch.randint(0, 5, (6,), device="cuda")
    assert torch.autograd.gradcheck(lambda a, b: ember.linear_cross_entropy(a, b, y_small, 0.7, 4), small)


def test_linear_cross_entropy_under_cuda_autocast_and_compile():
    head = ember.LinearCrossEntropy(32, 101).cuda()
    x, t = torch.randn(3, 17, 32, device="cuda"), torch.randint(0, 101, (3, 17), device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        ours = head(x, t)
        want = F.cross_entropy((x.reshape(-1, 32) @ head.weight.T).float(), t.reshape(-1))
    assert ours.dtype == torch.float32
    torch.testing.assert_close(ours, want, rtol=1e-2, atol=1e-2)
    torch.testing.assert_close(torch.compile(head, fullgraph=True)(x, t), head(x, t), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("retrieval", ["after", "chunk"])
def test_titans_memory_on_the_device_equals_the_cpu_in_float64(retrieval):
    inputs, state = memory_inputs(B=2, H=3, T=37, dh=8, m=16)
    y_cpu, after_cpu = ember.titans_memory(*inputs, state, 8, retrieval, 1.0)
    y_gpu, after_gpu = ember.titans_memory(*on_device(*inputs), ember.MemoryState(*on_device(*state)), 8, retrieval, 1.0)
    torch.testing.assert_close(y_gpu.cpu(), y_cpu, rtol=1e-10, atol=1e-12)
    for a, b in zip(after_gpu, after_cpu):
        torch.testing.assert_close(a.cpu(), b, rtol=1e-10, atol=1e-12)


def test_the_titans_module_compiles_on_the_device():
    memory = ember.TitansMemory(heads=2, head_dim=8, hidden=16, chunk=4).cuda()
    x = on_device(*(t.float() for t in memory_inputs(H=2, dh=8, m=16)[0]))
    eager = memory(*x)[0]
    torch.testing.assert_close(torch.compile(memory, fullgraph=True)(*x)[0], eager, rtol=1e-4, atol=1e-5)


def test_a_cms_level_on_the_device_equals_the_cpu_in_float64():
    u, teach, w = level_inputs(T=23, d=8, Fw=12)
    cpu = ember.cms_level(u, teach, *w, 4, 0.1, grad_clip=0.5)
    gpu = ember.cms_level(*on_device(u, teach, *w), 4, 0.1, grad_clip=0.5)
    torch.testing.assert_close(gpu.cpu(), cpu, rtol=1e-10, atol=1e-12)
    cms = ember.CMS(16, widths=[24, 40], chunks=[4, 0]).cuda()
    x, t = torch.randn(2, 9, 16, device="cuda"), torch.randn(2, 9, 16, device="cuda")
    torch.testing.assert_close(torch.compile(cms, fullgraph=True)(x, t), cms(x, t), rtol=1e-5, atol=1e-6)


def test_epsilon_of_a_device_tensor_equals_the_cpu_one():
    table = torch.randn(700, 48) + 0.2
    cpu, gpu = ember.epsilon(table, block=128), ember.epsilon(table.cuda(), block=128)
    for name in ("mu", "sigma", "epsilon"):
        assert getattr(gpu, name) == pytest.approx(getattr(cpu, name), rel=1e-5, abs=1e-6), name


@pytest.mark.parametrize("name", sorted(CASES))
def test_opcheck_on_the_device(name):
    # test_opcheck.py's cases, moved to the GPU: schema, autograd and fake implementations of the CUDA kernels
    args = tuple(a.detach().cuda().requires_grad_(a.requires_grad) if torch.is_tensor(a) else a for a in CASES[name]())
    torch.library.opcheck(getattr(torch.ops.ember, name).default, args)
