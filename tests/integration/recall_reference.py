"""An independent PyTorch reference for the associative-recall task (experiments/mixers-cpu/README.md,
"Associative recall"): a 2-layer DeltaNet language model written from the papers, not from ember's code. It
answers whether a standard linear-memory mixer learns `ember prepare recall`'s data at
configs/recall.yaml's budget, and how that depends on the scale the projections are drawn at.

Mixer per layer: q, k, v = SiLU(causal depthwise conv_4(x W_{q,k,v})), q and k l2-normalised,
beta = sigmoid(x w_beta); S_t = S_{t-1} + beta_t k_t (v_t - S_{t-1}^T k_t)^T (delta rule, S_0 = 0),
o_t = S_t^T q_t; out = W_o(RMSNorm(o) * SiLU(x W_g)). Blocks are pre-norm with a SwiGLU MLP of
width 2d, the embedding tied. AdamW (0.9, 0.95, wd 0.1 on every parameter, where ember exempts
some), warm-up 20 steps, cosine to lr/10, gradient norm clipped to 1, micro-batch 32, batches drawn
with replacement: configs/recall.yaml's schedule, not its exact optimiser or data order.

  python tests/integration/recall_reference.py DATA_DIR [--d 128] [--std 0.02] [--qkv-std 0.072]

DATA_DIR holds train_*.bin (llm.c uint16 shards of 17-token sequences) and recall_task.jsonl.
Prints the held-out recall (answers predicted greedily after their query key) every 200 steps and
a final JSON line.
"""
import argparse
import glob
import json
import math
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, SEQ = 33, 17


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("data")
    p.add_argument("--d", type=int, default=64, help="model width (4 heads)")
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--std", type=float, default=0.0,
                   help="draw every linear layer from N(0, std) (0: PyTorch's default init)")
    p.add_argument("--qkv-std", type=float, default=0.0,
                   help="then draw the mixers' q/k/v projections from N(0, qkv-std) (0: leave them)")
    return p.parse_args()


def read_shard(path):
    header = np.fromfile(path, dtype=np.int32, count=256)
    if len(header) < 256 or header[0] != 20240520:
        raise SystemExit(f"{path}: not an llm.c uint16 shard (magic 20240520)")
    tokens = np.fromfile(path, dtype=np.uint16, offset=1024)
    if len(tokens) != header[2] or len(tokens) % SEQ:
        raise SystemExit(f"{path}: {len(tokens)} tokens, header says {header[2]}; expected whole {SEQ}-token sequences")
    return tokens


def load_sequences(data):
    shards = sorted(glob.glob(f"{data}/train_*.bin"))
    if not shards:
        raise SystemExit(f"no train_*.bin in {data}")
    tokens = np.concatenate([read_shard(s) for s in shards])
    return torch.from_numpy(tokens.astype(np.int64).reshape(-1, SEQ))


def load_task(data):
    try:
        return [json.loads(line) for line in open(f"{data}/recall_task.jsonl")]
    except (OSError, json.JSONDecodeError) as e:
        raise SystemExit(f"{data}/recall_task.jsonl: {e}")


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class DeltaNet(nn.Module):
    def __init__(self, d, heads, kernel=4):
        super().__init__()
        self.heads, self.dh, self.kernel = heads, d // heads, kernel
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.taps = nn.Parameter(torch.randn(3 * d, 1, kernel) / math.sqrt(kernel))
        self.beta = nn.Linear(d, heads)
        self.gate = nn.Linear(d, d, bias=False)
        self.out = nn.Linear(d, d, bias=False)
        self.norm = RMSNorm(self.dh)

    def forward(self, x):
        B, T, D = x.shape
        u = F.conv1d(F.pad(self.qkv(x).transpose(1, 2), (self.kernel - 1, 0)), self.taps, groups=3 * D)
        q, k, v = F.silu(u).transpose(1, 2).reshape(B, T, 3, self.heads, self.dh).permute(2, 0, 3, 1, 4)
        q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
        beta = torch.sigmoid(self.beta(x)).transpose(1, 2).unsqueeze(-1)  # [B, H, T, 1]
        S = x.new_zeros(B, self.heads, self.dh, self.dh)
        reads = []
        for t in range(T):
            error = v[:, :, t] - torch.einsum("bhij,bhi->bhj", S, k[:, :, t])
            S = S + torch.einsum("bhi,bhj->bhij", k[:, :, t], beta[:, :, t] * error)  # delta rule
            reads.append(torch.einsum("bhij,bhi->bhj", S, q[:, :, t]))
        o = self.norm(torch.stack(reads, 2)).transpose(1, 2).reshape(B, T, D)
        return self.out(o * F.silu(self.gate(x)))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.norm1, self.norm2, self.mixer = RMSNorm(d), RMSNorm(d), DeltaNet(d, heads)
        self.up = nn.Linear(d, 4 * d, bias=False)
        self.down = nn.Linear(2 * d, d, bias=False)

    def forward(self, x):
        x = x + self.mixer(self.norm1(x))
        gate, up = self.up(self.norm2(x)).chunk(2, -1)
        return x + self.down(F.silu(gate) * up)


class LM(nn.Module):
    def __init__(self, d, heads=4, layers=2):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d)
        nn.init.normal_(self.embed.weight, std=0.02)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
        self.norm = RMSNorm(d)

    def forward(self, x):
        h = self.embed(x)
        for block in self.blocks:
            h = block(h)
        return self.norm(h) @ self.embed.weight.t()


def initialise(model, std, qkv_std):
    if std:
        for m in model.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=std)
    if qkv_std:
        for block in model.blocks:
            nn.init.normal_(block.mixer.qkv.weight, std=qkv_std)


def recall(model, task):
    x = torch.tensor([item["tokens"] for item in task])
    answers = torch.tensor(task[0]["answers"])
    with torch.no_grad():
        predicted = model(x[:, :-1]).argmax(-1)
    return (predicted[:, answers - 1] == x[:, answers]).float().mean().item()


def learning_rate(step, a):
    if step < 20:
        return a.lr * (step + 1) / 20
    floor = a.lr / 10
    return floor + (a.lr - floor) * 0.5 * (1 + math.cos(math.pi * (step - 20) / max(1, a.steps - 20)))


def main():
    a = parse_args()
    torch.manual_seed(a.seed)
    torch.set_num_threads(1)
    sequences = load_sequences(a.data)
    task = load_task(a.data)
    model = LM(a.d)
    initialise(model, a.std, a.qkv_std)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.95), weight_decay=0.1)
    start = time.time()
    for step in range(a.steps):
        for group in opt.param_groups:
            group["lr"] = learning_rate(step, a)
        batch = sequences[torch.randint(0, len(sequences), (32,))]
        loss = F.cross_entropy(model(batch[:, :-1]).reshape(-1, VOCAB), batch[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if (step + 1) % 200 == 0:
            print(f"step {step + 1} loss {loss.item():.3f} recall {recall(model, task):.3f} "
                  f"{time.time() - start:.0f}s", flush=True)
    print(json.dumps({"d": a.d, "seed": a.seed, "steps": a.steps, "lr": a.lr, "std": a.std,
                      "qkv_std": a.qkv_std, "recall": recall(model, task)}))


if __name__ == "__main__":
    main()
