"""Python PyTorch reference of ember's model (same shapes, same math: RMSNorm, RoPE rotate-half,
causal SDPA, SwiGLU, tied head, AdamW with decay/no-decay groups, clipping), at Python's best:
fused AdamW (`torch.optim.AdamW(fused=True)`), and with `compile` the model under `torch.compile`
(inductor, default mode; compilation happens in the untimed warm-up steps). Process settings as
ember's bench: on a CPU, flush-to-zero on every thread, as ember does (`flush_denormals_everywhere`:
set on the main thread before ATen starts its worker threads, which inherit it, then checked on
all of them), and glibc heap retention through GLIBC_TUNABLES, which bench/run_throughput.sh and
bench/run_dist.sh set for it (runs recorded before 2026-12-04 had neither; before 2026-12-07 only
the main thread's flush was asked for, unchecked).
Prints one JSON line like ember_train_bench. On `cuda` the steps are timed between device
synchronisations and the line also carries the peak allocated device memory.
Usage: reference_train.py V D L H D_FF B T STEPS [fp32|bf16] [eager|compile] [cpu|cuda]"""
import json
import math
import sys
import time

import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self, d, h, d_ff):
        super().__init__()
        self.h = h
        self.mixer_norm = torch.nn.RMSNorm(d, eps=1e-6)
        self.mlp_norm = torch.nn.RMSNorm(d, eps=1e-6)
        self.wq, self.wk, self.wv, self.wo = (torch.nn.Linear(d, d, bias=False) for _ in range(4))
        self.w_gate = torch.nn.Linear(d, d_ff, bias=False)
        self.w_up = torch.nn.Linear(d, d_ff, bias=False)
        self.w_down = torch.nn.Linear(d_ff, d, bias=False)

    def forward(self, x, cos, sin):
        B, T, D = x.shape
        n = self.mixer_norm(x)
        heads = lambda w: w(n).view(B, T, self.h, D // self.h).transpose(1, 2)
        q, k, v = rope(heads(self.wq), cos, sin), rope(heads(self.wk), cos, sin), heads(self.wv)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        h = x + self.wo(y.transpose(1, 2).reshape(B, T, D))
        m = self.mlp_norm(h)
        return h + self.w_down(F.silu(self.w_gate(m)) * self.w_up(m))


def rope(x, cos, sin):
    half = x.shape[-1] // 2
    xa, xb = x[..., :half], x[..., half:]
    return torch.cat([xa * cos - xb * sin, xb * cos + xa * sin], -1)


class LM(torch.nn.Module):
    def __init__(self, V, d, L, h, d_ff, T):
        super().__init__()
        self.embedding = torch.nn.Embedding(V, d)
        self.layers = torch.nn.ModuleList(Block(d, h, d_ff) for _ in range(L))
        self.final_norm = torch.nn.RMSNorm(d, eps=1e-6)
        for p in self.parameters():
            if p.dim() >= 2:
                torch.nn.init.normal_(p, 0.0, 0.02)
        dh = d // h
        omega = 10000.0 ** (-2.0 * torch.arange(dh // 2, dtype=torch.float64) / dh)
        theta = torch.outer(torch.arange(T, dtype=torch.float64), omega)
        self.register_buffer("cos", theta.cos().float(), persistent=False)
        self.register_buffer("sin", theta.sin().float(), persistent=False)

    def forward(self, ids, targets):
        x = self.embedding(ids)
        for layer in self.layers:
            x = layer(x, self.cos, self.sin)
        logits = F.linear(self.final_norm(x), self.embedding.weight)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1))


def fused_adamw(model):
    """AdamW as ember configures it: decay on matrices but the embedding, fused kernel."""
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and not n.startswith("embedding")]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2 or n.startswith("embedding")]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                             lr=1e-4, betas=(0.9, 0.95), fused=True)


def flush_denormals_everywhere():
    """Flush-to-zero on every ATen worker thread. PyTorch's switch sets the calling thread's MXCSR;
    worker threads copy it when they start, so it must come before the first parallel op. Checked:
    denormals spread over every worker's share of an element-wise product must all come out zero."""
    if not torch.set_flush_denormal(True):
        sys.exit("reference: this CPU cannot flush denormals to zero")
    n = max(1 << 22, torch.get_num_threads() << 18)
    probe = torch.ones(n, dtype=torch.int32).view(torch.float32)  # the smallest denormal, set as bits
    if int(torch.count_nonzero((probe * 1.0).view(torch.int32))) != 0:  # bits: DAZ cannot hide them
        sys.exit("reference: denormals survive on some worker thread (a parallel op ran before the flush)")


def main():
    V, D, L, H, DFF, B, T, STEPS = (int(a) for a in sys.argv[1:9])
    bf16 = len(sys.argv) > 9 and sys.argv[9] == "bf16"
    compiled = len(sys.argv) > 10 and sys.argv[10] == "compile"
    device = sys.argv[11] if len(sys.argv) > 11 else "cpu"
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    if device == "cpu":
        flush_denormals_everywhere()
    torch.manual_seed(0)
    model = LM(V, D, L, H, DFF, T).to(device)
    forward = torch.compile(model) if compiled else model
    opt = fused_adamw(model)
    batch = torch.randint(0, V, (B, T + 1), device=device)
    x, y = batch[:, :T], batch[:, 1:]

    def step():
        with torch.autocast(device, dtype=torch.bfloat16, enabled=bf16):
            loss = forward(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(3):  # warm-up: allocator, oneDNN primitives, and compilation under compile
        step()
    sync()
    t0 = time.perf_counter()
    for _ in range(STEPS):
        step()
    sync()
    s = time.perf_counter() - t0
    peak = torch.cuda.max_memory_allocated() / 2**30 if device == "cuda" else None
    print(json.dumps({"impl": "python-compile" if compiled else "python-eager", "precision": "bf16" if bf16 else "fp32",
                      "params": sum(p.numel() for p in model.parameters()),
                      "s_per_step": s / STEPS, "tokens_per_s": STEPS * B * T / s,
                      "threads": torch.get_num_threads(), "device": device, "peak_allocated_gib": peak}))


if __name__ == "__main__":
    main()
