"""Plain PyTorch references, written from the papers' equations (ember's docs), independent of ember's
operators: float64, one token or one chunk at a time, gradients from autograd."""
import torch
import torch.nn.functional as F


def bspline_basis(u, knots, knot_scale=None, normalize=True):
    """Quadratic B-spline B(t) = 3/4 - t^2 (t < 1/2), (3/2 - t)^2 / 2 (t < 3/2), else 0, at
    t = |u - m / (kappa - 1)| (kappa - 1) for knots m = 0..kappa-1: [..., kappa]."""
    grid = torch.arange(knots, dtype=u.dtype) / (knots - 1)
    scale = (knots - 1) if knot_scale is None else knot_scale.unsqueeze(-1)
    t = (u.unsqueeze(-1) - grid).abs() * scale
    B = torch.where(t < 0.5, 0.75 - t ** 2, torch.where(t < 1.5, 0.5 * (1.5 - t) ** 2, torch.zeros_like(t)))
    return B / B.sum(-1, keepdim=True) if normalize else B


def spline_product(u, S, normalize=True, knot_scale=None):
    """M[n, l, r] = prod_d sum_m B_m(u[n, l, d]) S[l, d, m, r], multiplied out directly."""
    B = bspline_basis(u, S.shape[2], knot_scale, normalize)
    phi = torch.einsum("nhdk,hdkr->nhdr", B, S)
    return torch.prod(phi.sign() * (phi.abs() + 1e-9), dim=2)


def lev_table(p, vocab, k, base, squash="sigmoid_half_ln", normalize=True):
    """The LEV generator for ids 0..V-1 from a state dict p of ember's parameter names."""
    ids = torch.arange(vocab)
    z = sum(p["codebooks"][j][(ids // base ** (k - 1 - j)) % base] for j in range(k))
    s = torch.einsum("nd,hed->nhe", z, p["seed_proj"])
    ln = F.layer_norm(s, (s.shape[-1],), eps=1e-5) * p["ln_weight"] + p["ln_bias"]
    u = torch.sigmoid(0.5 * ln if squash == "sigmoid_half_ln" else ln)
    M = spline_product(u, p["spline"], normalize, p.get("knot_scale"))
    return M.reshape(vocab, -1) @ p["out_proj"]


def titans_memory(q, k, v, theta, eta, alpha, w1, w2, chunk, retrieval, grad_clip):
    """Token by token: gradients of ||M(k_t) - v_t||^2 / d_h by autograd at the chunk-start weights."""
    dh = q.shape[-1]
    s1, s2 = torch.zeros_like(w1), torch.zeros_like(w2)
    out = []
    for t in range(q.shape[2]):
        if t % chunk == 0:
            r1, r2 = w1.detach().clone().requires_grad_(), w2.detach().clone().requires_grad_()
            ref1, ref2 = w1, w2
        kt, vt = k[:, :, t:t + 1], v[:, :, t:t + 1]
        loss = ((kt + F.silu(kt @ r1) @ r2 - vt) ** 2).sum() / dh  # per (b, h) terms are independent
        u1, u2 = torch.autograd.grad(loss, (r1, r2))
        if grad_clip > 0:
            norm = (u1.pow(2).sum((-2, -1), keepdim=True) + u2.pow(2).sum((-2, -1), keepdim=True)).sqrt()
            factor = torch.clamp(grad_clip / norm, max=1.0)
            u1, u2 = u1 * factor, u2 * factor
        read = lambda a, b, z: z + F.silu(z @ a) @ b
        qt = q[:, :, t:t + 1]
        if retrieval == "before":
            out.append(read(w1, w2, qt))
        g = lambda x: x[:, :, t, None, None]
        s1, s2 = g(eta) * s1 - g(theta) * u1, g(eta) * s2 - g(theta) * u2
        w1, w2 = (1 - g(alpha)) * w1 + s1, (1 - g(alpha)) * w2 + s2
        if retrieval == "after":
            out.append(read(w1, w2, qt))
        if retrieval == "chunk":
            out.append(read(ref1, ref2, qt))
    return torch.cat(out, 2), (w1, w2, s1, s2)


def swiglu(u, gate, up, down):
    return F.linear(F.silu(F.linear(u, gate)) * F.linear(u, up), down)


def cms_level(u, teach, gate, up, down, chunk, lr, grad_clip):
    """Nested Learning Eq. 71 per sequence: after each chunk, theta -= lr sum_t clip(grad <teach_t, MLP(u_t)>),
    each token's gradient from autograd at the chunk-start weights (the steps are constants here)."""
    outputs = []
    for b in range(u.shape[0]):
        w = [gate.detach().clone(), up.detach().clone(), down.detach().clone()]
        rows = []
        for start in range(0, u.shape[1], chunk):
            uc, tc = u[b, start:start + chunk], teach[b, start:start + chunk]
            rows.append(swiglu(uc, *w))
            step = [torch.zeros_like(x) for x in w]
            for t in range(uc.shape[0]):
                leaves = [x.clone().requires_grad_() for x in w]
                grads = torch.autograd.grad((tc[t] * swiglu(uc[t], *leaves)).sum(), leaves)
                norm = torch.sqrt(sum(g.pow(2).sum() for g in grads))
                factor = min(1.0, grad_clip / norm.item()) if grad_clip > 0 else 1.0
                step = [s + factor * g for s, g in zip(step, grads)]
            w = [x - lr * s for x, s in zip(w, step)]
        outputs.append(torch.cat(rows))
    return torch.stack(outputs)
