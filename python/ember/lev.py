"""LEV embeddings (docs/leviathan.md): a small continuous generator in place of the input table.
ids -> base-b digits -> summed codebook seeds -> per head sigmoid(0.5 LN(W_seed z)) -> quadratic B-spline
basis -> rank-r separable product -> sum over heads of M_l W_out_l. The spline product is ember's fused
operator (torch.ops.ember.lev_spline, CPU and CUDA kernels); parameter names and shapes are ember's,
so a trained run's weights load as they are (LEVEmbedding.from_run)."""
import math

import torch
import torch.nn.functional as F

from . import runs

SQUASHES = ("sigmoid_half_ln", "sigmoid_ln")
IMPLS = ("auto", "fused", "reference")


def lev_base(vocab, k):
    """b = ceil(V^(1/k)): the smallest b with b^k >= V (step 1)."""
    b = max(2, int(math.floor(vocab ** (1.0 / k))))
    while b > 2 and (b - 1) ** k >= vocab:
        b -= 1
    while b ** k < vocab:
        b += 1
    return b


def lev_parameter_count(vocab, dim, k=3, d_seed=128, heads=8, knots=16, rank=64, learnable_knot_scale=False):
    """P_LEV = k b d_s + h (d_s^2 + 2 d_s + d_s kappa r + r D) (+ h d_s with a learnable knot scale)."""
    ds = d_seed
    return (k * lev_base(vocab, k) * ds + heads * (ds * ds + 2 * ds + ds * knots * rank + rank * dim)
            + (heads * ds if learnable_knot_scale else 0))


def lev_spline(u, S, normalize=True):
    """M[n, l, r] = prod_d sum_m B~_m(u[n, l, d]) S[l, d, m, r] for u [N, h, d_s] in [0, 1], S [h, d_s, kappa, r]
    (fp32 or fp64, one dtype): ember's fused kernels, differentiable in u and S."""
    return torch.ops.ember.lev_spline(u, S, normalize)


class LEVEmbedding(torch.nn.Module):
    """model.embedding.lev with every option of ember's config section, defaults the paper's."""

    def __init__(self, vocab_size, dim, k=3, d_seed=128, heads=8, knots=16, rank=64, squash="sigmoid_half_ln",
                 normalize_basis=True, learnable_knot_scale=False, impl="auto"):
        super().__init__()
        if squash not in SQUASHES:
            raise ValueError(f"LEVEmbedding: squash '{squash}' is not one of {', '.join(SQUASHES)}")
        if impl not in IMPLS:
            raise ValueError(f"LEVEmbedding: impl '{impl}' is not one of {', '.join(IMPLS)}")
        if knots < 3:
            raise ValueError(f"LEVEmbedding: knots must be >= 3, got {knots}")
        if learnable_knot_scale and impl == "fused":
            raise ValueError("LEVEmbedding: learnable_knot_scale needs impl = reference or auto "
                             "(the fused kernels assume the fixed knot grid)")
        self.vocab_size, self.dim, self.k, self.d_seed, self.heads = vocab_size, dim, k, d_seed, heads
        self.squash, self.normalize_basis = squash, normalize_basis
        self.impl = ("reference" if learnable_knot_scale else "fused") if impl == "auto" else impl
        self.base = lev_base(vocab_size, k)
        self.codebooks = torch.nn.Parameter(torch.randn(k, self.base, d_seed) * 0.02)
        self.seed_proj = torch.nn.Parameter(torch.randn(heads, d_seed, d_seed) * 0.02)
        self.ln_weight = torch.nn.Parameter(torch.ones(heads, d_seed))
        self.ln_bias = torch.nn.Parameter(torch.zeros(heads, d_seed))
        self.spline = torch.nn.Parameter(1.0 + 0.1 * torch.randn(heads, d_seed, knots, rank))  # S = 1 + N(0, 0.1)
        self.out_proj = torch.nn.Parameter(torch.randn(heads * rank, dim) * (0.02 / math.sqrt(heads)))
        self.knot_scale = torch.nn.Parameter(torch.full((heads, d_seed), float(knots - 1))) if learnable_knot_scale else None

    @classmethod
    def from_run(cls, run, map_location="cpu"):
        """The LEV embedding of a trained ember run (its newest checkpoint) or of one checkpoint directory."""
        model = runs.run_config(run)["model"]
        embedding = model["embedding"]
        if embedding["kind"] != "lev":
            raise ValueError(f"ember: {run} has embedding kind '{embedding['kind']}', not lev")
        tensors = runs.model_tensors(run, "embedding.")
        module = cls(model["vocab_size"], model["d_model"], **embedding["lev"])
        module.load_state_dict(tensors)
        return module.to(map_location)

    def digits(self, ids):
        """Digits of ids in base b, most significant first: [k, N]."""
        out, rest = [], ids
        for _ in range(self.k):
            out.append(torch.remainder(rest, self.base))
            rest = torch.div(rest, self.base, rounding_mode="floor")
        return torch.stack(out[::-1])

    def squashed_seeds(self, ids):
        """u [N, h, d_s]: the per-head squashed seeds fed to the spline (steps 2-3)."""
        z = sum(F.embedding(d, c) for d, c in zip(self.digits(ids), self.codebooks))  # z(i) = sum_j C_j[i_j]
        s = torch.einsum("nd,hed->nhe", z, self.seed_proj)  # W_seed_l z
        ln = F.layer_norm(s, (self.d_seed,), eps=1e-5) * self.ln_weight + self.ln_bias
        return torch.sigmoid(0.5 * ln if self.squash == "sigmoid_half_ln" else ln)

    def generate(self, ids):
        """G for a list of ids [N] -> [N, D], in fp32 whatever autocast says (step 8)."""
        self.check_ids(ids)
        return self._rows(ids)

    def _rows(self, ids):
        with torch.autocast(ids.device.type, enabled=False):
            u = self.squashed_seeds(ids)
            if self.impl == "fused":
                M = lev_spline(u, self.spline, self.normalize_basis)
            else:
                M = torch.ops.ember.lev_spline_reference(u, self.spline, self.normalize_basis, self.knot_scale)
            return M.reshape(M.shape[0], -1) @ self.out_proj  # E(i) = sum_l M_l W_out_l  (step 7)

    def check_ids(self, ids):
        """IndexError unless every id is in [0, vocab_size), as nn.Embedding (the digits would otherwise
        map id V + 5 onto id 5). Not under torch.compile, where reading the ids back would break the graph."""
        if ids.numel() == 0 or torch.compiler.is_compiling():
            return
        lo, hi = torch.stack(torch.aminmax(ids)).tolist()  # one read back
        if lo < 0 or hi >= self.vocab_size:
            raise IndexError(f"LEVEmbedding: token id {lo if lo < 0 else hi} is out of range [0, {self.vocab_size})")

    def forward(self, ids):
        """Embeddings of ids of any shape; the generator runs once per unique id of the batch (under
        torch.compile once per id, as a data-dependent shape would break the graph)."""
        self.check_ids(ids)
        if torch.compiler.is_compiling():
            return self._rows(ids.reshape(-1)).view(*ids.shape, self.dim)
        unique, inverse = torch.unique(ids.reshape(-1), sorted=True, return_inverse=True)
        return self._rows(unique).index_select(0, inverse).view(*ids.shape, self.dim)

    def table(self, batch=65536):
        """The materialised V x D input table (what `ember capacity` and `ember export hf` use)."""
        ids = torch.arange(self.vocab_size, device=self.out_proj.device)
        return torch.cat([self._rows(chunk) for chunk in ids.split(batch)])
