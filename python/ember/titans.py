"""Titans' neural long-term memory (Behrouz, Zhong & Mirrokni, arXiv 2501.00663; ember's docs/mixers.md):
per head a residual MLP M(z) = z + SiLU(z W1) W2 trained inside the forward pass on ||M(k_t) - v_t||^2 / d_h
with momentum and forgetting,
    S_t = eta_t S_{t-1} - theta_t grad(M_{t'}; k_t, v_t),   M_t = (1 - alpha_t) M_{t-1} + S_t   (Eq. 13-14)
with gradients taken at the chunk-start weights t' (Eq. 16). ember's chunk-parallel algorithm is exact
against the token-by-token recurrence (torch.ops.ember.titans_memory_reference)."""
from typing import NamedTuple

import math

import torch

RETRIEVALS = ("after", "before", "chunk")
STEPS = ("plain", "normalized")
FORMS = ("mlp", "linear")


class MemoryState(NamedTuple):
    """Fast weights per sequence and head: w1, s1 [B, H, d_h, m]; w2, s2 [B, H, m, d_h]. A linear memory
    M(z) = [z +] z W keeps W in w1, s1 [B, H, d_h, d_h], with w2, s2 empty [B, H, 0, d_h]."""
    w1: torch.Tensor
    w2: torch.Tensor
    s1: torch.Tensor
    s2: torch.Tensor


def titans_memory(q, k, v, theta, eta, alpha, state, chunk, retrieval="after", grad_clip=0.0, residual=True,
                  step="plain"):
    """Outputs y [B, H, T, d_h] of queries q read from the memory as it learns k -> v (all [B, H, T, d_h];
    gates theta, eta, alpha [B, H, T]), starting from `state`; returns (y, the state after the last token).
    retrieval: 'after' (a token reads the memory after its own update), 'before', or 'chunk' (the chunk-start
    memory). grad_clip > 0 scales each token's inner gradient to norm <= grad_clip. residual=False drops the
    memory's `z +`. step='normalized' divides each token's step by (2 / d_h) ||dM(k)/dW||_F^2 / d_h, so theta is
    the fraction of a full write (normalised LMS; the linear memory without residual is then the delta rule)."""
    if retrieval not in RETRIEVALS:
        raise ValueError(f"titans_memory: retrieval '{retrieval}' is not one of {', '.join(RETRIEVALS)}")
    if step not in STEPS:
        raise ValueError(f"titans_memory: step '{step}' is not one of {', '.join(STEPS)}")
    y, *next_state = torch.ops.ember.titans_memory(q, k, v, theta, eta, alpha, *state, chunk, retrieval,
                                                   float(grad_clip), bool(residual), step)
    return y, MemoryState(*next_state)


class TitansMemory(torch.nn.Module):
    """The memory with outer-trained initial weights W1 [H, d_h, m], W2 [H, m, d_h] (Glorot-normal, as
    ember's titans mixer; form='linear': W [H, d_h, d_h] and no W2, `hidden` unused); every sequence starts
    from them with zero momentum."""

    def __init__(self, heads, head_dim, hidden, chunk=16, retrieval="after", grad_clip=1.0, form="mlp",
                 residual=True, step="plain"):
        super().__init__()
        if form not in FORMS:
            raise ValueError(f"TitansMemory: form '{form}' is not one of {', '.join(FORMS)}")
        if form == "linear":
            self.w1 = torch.nn.Parameter(torch.randn(heads, head_dim, head_dim) * math.sqrt(1.0 / head_dim))
            self.register_buffer("w2", torch.zeros(heads, 0, head_dim))
        else:
            std = math.sqrt(2.0 / (head_dim + hidden))
            self.w1 = torch.nn.Parameter(torch.randn(heads, head_dim, hidden) * std)
            self.w2 = torch.nn.Parameter(torch.randn(heads, hidden, head_dim) * std)
        self.chunk, self.retrieval, self.grad_clip = chunk, retrieval, grad_clip
        self.residual, self.step = residual, step

    def initial_state(self, batch):
        w1 = self.w1.unsqueeze(0).expand(batch, -1, -1, -1)
        w2 = self.w2.unsqueeze(0).expand(batch, -1, -1, -1)
        return MemoryState(w1, w2, torch.zeros_like(w1), torch.zeros_like(w2))

    def forward(self, q, k, v, theta, eta, alpha, state=None):
        """y [B, H, T, d_h] and the state after the last token (pass it back to continue the sequence)."""
        state = self.initial_state(q.shape[0]) if state is None else state
        return titans_memory(q, k, v, theta, eta, alpha, state, self.chunk, self.retrieval, self.grad_clip,
                             self.residual, self.step)
