"""Python data parallel at its best on CPUs, for bench/run_dist.sh: the model of reference_train.py
(ember's math: RMSNorm, RoPE, causal SDPA, SwiGLU, tied head) under
`torch.nn.parallel.DistributedDataParallel` over Gloo (25 MB buckets, gradients as bucket views,
so the all-reduce overlaps backward as in ember), fused AdamW, global-norm clipping, one intra-op
thread per rank, flush-to-zero (checked) and glibc heap retention as ember; with `compile` the DDP model under `torch.compile` (inductor splits the graph at
the bucket boundaries so the overlap stays), compiled in the untimed warm-up.
Run under torchrun (`python -m torch.distributed.run --standalone --nproc-per-node W ...`).
Rank 0 prints one JSON line: global tokens/s (the median over the timed steps) and the parameters.
Usage: reference_ddp.py V D L H D_FF B T STEPS [eager|compile]"""
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_train import LM, flush_denormals_everywhere, fused_adamw  # noqa: E402  (the single-process reference's model and optimizer)


def main():
    V, D, L, H, DFF, B, T, STEPS = (int(a) for a in sys.argv[1:9])
    compiled = len(sys.argv) > 9 and sys.argv[9] == "compile"
    torch.set_num_threads(1)
    flush_denormals_everywhere()  # as ember's trainer on a CPU
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)  # same start everywhere; DDP also broadcasts rank 0's parameters
    model = LM(V, D, L, H, DFF, T)
    ddp = DistributedDataParallel(model, bucket_cap_mb=25, gradient_as_bucket_view=True)
    forward = torch.compile(ddp) if compiled else ddp
    opt = fused_adamw(model)
    generator = torch.Generator().manual_seed(1 + rank)  # each rank its own slice of the batch
    batch = torch.randint(0, V, (B, T + 1), generator=generator)
    x, y = batch[:, :T], batch[:, 1:]

    def step():
        loss = forward(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=False)  # keep the bucket views DDP writes into

    for _ in range(3):  # warm-up: allocator, oneDNN primitives, DDP's bucket rebuild, compilation
        step()
    seconds = []
    for _ in range(STEPS):
        dist.barrier()
        t0 = time.perf_counter()
        step()
        seconds.append(time.perf_counter() - t0)
    slowest = torch.tensor(seconds)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)  # a step ends when its slowest rank does
    if rank == 0:
        s = statistics.median(slowest.tolist())
        print(json.dumps({"impl": "python-ddp-compile" if compiled else "python-ddp-eager", "world": world,
                          "params": sum(p.numel() for p in model.parameters()),
                          "s_per_step": s, "tokens_per_s": world * B * T / s}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
