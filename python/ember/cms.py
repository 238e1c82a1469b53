"""Hope-attention's Continuum Memory System (Nested Learning, Behrouz et al. 2025; ember's docs/mixers.md,
"Hope-attention"): a chain of SwiGLU levels, x <- x + MLP_l(RMSNorm_l(x)), where level l may learn in
context: after every chunk_l tokens its weights take a step
    theta <- theta - lr * sum_t grad_theta <teach_t, MLP_theta(u_t)>       (Eq. 71)
at the chunk-start weights, on a teach signal the caller supplies per token (ember's two_pass signal: the
next-token loss gradient at the final stream of a first, static pass)."""
import torch
import torch.nn.functional as F


def cms_level(u, teach, w_gate, w_up, w_down, chunk, lr, differentiate=False, grad_clip=0.0):
    """One level's output for its normed input u [B, T, d] and teach [B, T, d]; w_gate, w_up [F, d],
    w_down [d, F]. chunk 0 is a static level. With `differentiate` the outer gradient flows through the
    in-context steps; without, they are constants to it."""
    return torch.ops.ember.cms_level(u, teach, w_gate, w_up, w_down, int(chunk), float(lr), bool(differentiate),
                                     float(grad_clip))


class CMS(torch.nn.Module):
    """Levels of widths `widths` (fastest first) updating after `chunks[l]` tokens (0: static)."""

    def __init__(self, dim, widths, chunks, lr=0.01, differentiate=False, grad_clip=1.0, eps=1e-6, init_std=0.02):
        super().__init__()
        if len(widths) != len(chunks):
            raise ValueError(f"CMS: {len(widths)} widths but {len(chunks)} chunk sizes")
        self.chunks, self.lr, self.differentiate, self.grad_clip, self.eps = list(chunks), lr, differentiate, grad_clip, eps
        self.norms = torch.nn.ParameterList(torch.nn.Parameter(torch.ones(dim)) for _ in widths)
        self.w_gate = torch.nn.ParameterList(torch.nn.Parameter(torch.randn(f, dim) * init_std) for f in widths)
        self.w_up = torch.nn.ParameterList(torch.nn.Parameter(torch.randn(f, dim) * init_std) for f in widths)
        self.w_down = torch.nn.ParameterList(torch.nn.Parameter(torch.randn(dim, f) * init_std) for f in widths)

    def forward(self, x, teach=None):
        """x [B, T, d] -> the stream after every level; without `teach` every level is static."""
        for l, chunk in enumerate(self.chunks):
            u = F.rms_norm(x, (x.shape[-1],), self.norms[l], self.eps)
            if teach is None or chunk == 0:
                y = F.linear(F.silu(F.linear(u, self.w_gate[l])) * F.linear(u, self.w_up[l]), self.w_down[l])
            else:
                y = cms_level(u, teach, self.w_gate[l], self.w_up[l], self.w_down[l], chunk, self.lr,
                              self.differentiate, self.grad_clip)
            x = x + y
        return x
