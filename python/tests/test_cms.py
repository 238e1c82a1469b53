"""torch.ops.ember.cms_level (Hope-attention's CMS level learning in context) against a plain PyTorch
loop whose per-token inner gradients come from autograd (reference.py), in float64."""
import pytest
import torch
import torch.nn.functional as F

import ember
import reference


def level_inputs(B=2, T=10, d=4, Fw=6, dtype=torch.float64):
    u, teach = torch.randn(B, T, d, dtype=dtype), torch.randn(B, T, d, dtype=dtype)
    w = [0.5 * torch.randn(Fw, d, dtype=dtype), 0.5 * torch.randn(Fw, d, dtype=dtype),
         0.5 * torch.randn(d, Fw, dtype=dtype)]
    return u, teach, w


@pytest.mark.parametrize("chunk,clip", [(1, 0.0), (3, 0.0), (4, 0.3), (10, 1.0)])
def test_a_learning_level_equals_its_update_rule(chunk, clip):
    u, teach, w = level_inputs()
    ours = ember.cms_level(u, teach, *w, chunk, 0.1, grad_clip=clip)
    torch.testing.assert_close(ours, reference.cms_level(u, teach, *w, chunk, 0.1, clip), rtol=1e-10, atol=1e-12)


def test_a_static_level_is_a_swiglu_and_differentiate_moves_only_the_gradient():
    u, teach, w = level_inputs()
    torch.testing.assert_close(ember.cms_level(u, teach, *w, 0, 0.1), reference.swiglu(u, *w))
    leaves = [x.clone().requires_grad_() for x in w]
    plain = ember.cms_level(u, teach, *leaves, 3, 0.1)
    through = ember.cms_level(u, teach, *leaves, 3, 0.1, differentiate=True)
    torch.testing.assert_close(plain, through)  # the same forward
    g_plain = torch.autograd.grad(plain.sum(), leaves)
    g_through = torch.autograd.grad(through.sum(), leaves)
    assert any((a - b).abs().max() > 1e-6 for a, b in zip(g_plain, g_through))


def test_gradcheck_with_differentiation_and_compile():
    u, teach, w = level_inputs(B=1, T=4, d=2, Fw=3)
    leaves = [x.clone().requires_grad_() for x in (u, *w)]
    assert torch.autograd.gradcheck(lambda a, g, up, dn: ember.cms_level(a, teach, g, up, dn, 2, 0.1, True, 0.0), leaves)
    cms = ember.CMS(8, widths=[12, 20], chunks=[4, 0])
    x, t = torch.randn(2, 9, 8), torch.randn(2, 9, 8)
    torch.testing.assert_close(torch.compile(cms, fullgraph=True)(x, t), cms(x, t), rtol=1e-5, atol=1e-6)


def test_the_chain_adds_every_level_to_the_stream():
    cms = ember.CMS(8, widths=[12, 20], chunks=[4, 0]).double()
    x, t = torch.randn(2, 9, 8, dtype=torch.float64), torch.randn(2, 9, 8, dtype=torch.float64)
    want = x
    for l, chunk in enumerate(cms.chunks):
        un = F.rms_norm(want, (8,), cms.norms[l], 1e-6)
        w = (cms.w_gate[l].detach(), cms.w_up[l].detach(), cms.w_down[l].detach())
        want = want + (reference.cms_level(un, t, *w, chunk, cms.lr, cms.grad_clip) if chunk else reference.swiglu(un, *w))
    torch.testing.assert_close(cms(x, t), want, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="2 widths but 1 chunk sizes"):
        ember.CMS(8, widths=[4, 4], chunks=[2])
    with pytest.raises(RuntimeError, match="differ in shape"):
        ember.cms_level(x, t[:, :3], *w, 2, 0.1)
