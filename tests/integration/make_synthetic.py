"""Writes a synthetic corpus for the CLI tests: a noisy successor chain over V tokens
(next = perm[current] with probability 0.9, else uniform), as llm.c-format uint16 shards.
Prints the unigram entropy of the training split (nats)."""
import sys
import numpy as np

def write_shard(path, tokens):
    header = np.zeros(256, dtype=np.int32)
    header[:3] = [20240520, 1, len(tokens)]
    with open(path, "wb") as f:
        f.write(header.tobytes())
        f.write(tokens.astype(np.uint16).tobytes())

def chain(rng, perm, n, vocab):
    out = np.empty(n, dtype=np.int64)
    out[0] = rng.integers(vocab)
    noise = rng.random(n) < 0.1
    rand = rng.integers(vocab, size=n)
    for t in range(1, n):
        out[t] = rand[t] if noise[t] else perm[out[t - 1]]
    return out

def main():
    out_dir, vocab, n_train, n_val = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    rng = np.random.default_rng(0)
    perm = rng.permutation(vocab)
    train = chain(rng, perm, n_train, vocab)
    write_shard(f"{out_dir}/train_000.bin", train)
    write_shard(f"{out_dir}/val_000.bin", chain(rng, perm, n_val, vocab))
    p = np.bincount(train, minlength=vocab) / n_train
    p = p[p > 0]
    print(f"{-(p * np.log(p)).sum():.6f}")

if __name__ == "__main__":
    main()
