"""Reference side of the corpus-format tests: writes one set of documents as Parquet, gzip and
zstd JSONL and plain text, and checks ember's shards against tiktoken's ids for them.

  corpus_formats_reference.py write DIR                 the corpus below, written by pyarrow, gzip
                                                         and the zstd CLI (several row groups,
                                                         gzip members and zstd frames, nulls)
  corpus_formats_reference.py check DATA TOKDATA NAME VAL INPUT...
                                                         DATA's train/val shards are the documents
                                                         of INPUT (as ember lists them), each
                                                         encoded by tiktoken + <|endoftext|>, split
                                                         by sha256(key) < VAL (key: path, path:line
                                                         for JSONL, path:row for Parquet)
"""
import gzip
import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tokenizer_reference import encoding  # noqa: E402


def documents(seed, n):
    words = "the of and to in is was that for it with as his on be at by had are but from".split()
    out = []
    for i in range(n):
        body = " ".join(words[(seed * 7 + i * 3 + k * k) % len(words)] for k in range(5 + (i * 13) % 90))
        out.append(f"Document {seed}.{i}: {body}.\n\u00e9t\u00e9 \u65e5\u672c {i * i}  \ttabs\n\n")
    return out


def write(d):
    os.makedirs(d, exist_ok=True)
    a = documents(1, 150)
    texts = pa.array(a[:40] + [None] + a[40:], type=pa.string())  # a null row is skipped
    table = pa.table({"id": list(range(len(texts))), "text": texts, "url": ["u"] * len(texts)})
    pq.write_table(table, os.path.join(d, "a.parquet"), row_group_size=32)
    e = documents(5, 60)
    pq.write_table(pa.table({"text": pa.array(e, type=pa.large_string())}), os.path.join(d, "e.parquet"),
                   row_group_size=25, compression="zstd")
    b = documents(2, 90)
    with open(os.path.join(d, "b.jsonl.gz"), "wb") as f:  # two gzip members, one after the other
        for half in (b[:45], b[45:]):
            f.write(gzip.compress("".join(json.dumps({"text": t}) + "\n" for t in half).encode()))
    c = documents(3, 70)
    frames = []
    for k, part in enumerate((c[:30], c[30:])):  # two zstd frames
        plain = os.path.join(d, f"c{k}.tmp")
        with open(plain, "w") as f:
            f.write("".join(json.dumps({"text": t}) + "\n" for t in part))
        frames.append(subprocess.run(["zstd", "-q", "-c", plain], check=True, capture_output=True).stdout)
        os.remove(plain)
    with open(os.path.join(d, "c.jsonl.zst"), "wb") as f:
        f.write(b"".join(frames))
    with open(os.path.join(d, "d.txt"), "w") as f:
        f.write("".join(documents(4, 200)))


def records(path):
    """(key, text) of each document of the file, as ember reads them."""
    if path.endswith(".parquet"):
        col = pq.read_table(path, columns=["text"]).column("text").to_pylist()
        return [(f"{path}:{r + 1}", t) for r, t in enumerate(col) if t is not None]
    opener = {".gz": gzip.open, ".zst": None}.get(os.path.splitext(path)[1], open)
    if path.endswith(".zst"):
        raw = subprocess.run(["zstd", "-q", "-d", "-c", path], check=True, capture_output=True).stdout
    else:
        with opener(path, "rb") as f:
            raw = f.read()
    text = raw.decode("utf-8")
    if ".jsonl" in path:
        return [(f"{path}:{n + 1}", json.loads(line)["text"]) for n, line in enumerate(text.split("\n")) if line.strip()]
    return [(path, text)]


def to_val(key, fraction):
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 4294967296.0 < fraction


def shard_tokens(data, split):
    names = json.load(open(os.path.join(data, "manifest.json")))[f"{split}_shards"]
    out = []
    for n in names:
        raw = open(os.path.join(data, n), "rb").read()
        header = np.frombuffer(raw[:1024], dtype=np.int32)
        dtype = np.uint16 if header[0] == 20240520 else np.uint32
        toks = np.frombuffer(raw[1024:], dtype=dtype)
        assert len(toks) == header[2], (n, len(toks), header[2])
        out.append(toks)
    return np.concatenate(out).tolist() if out else []


def check(data, tokdata, name, fraction, inputs):
    enc = encoding(tokdata, name)
    eot = enc.encode_single_token("<|endoftext|>")
    want = {"train": [], "val": []}
    for path in inputs:
        for key, text in records(path):
            want["val" if to_val(key, fraction) else "train"] += enc.encode_ordinary(text) + [eot]
    for split in ("train", "val"):
        got = shard_tokens(data, split)
        assert got == want[split], f"{split}: {len(got)} tokens from ember, {len(want[split])} from tiktoken; " \
            f"first difference at {next((i for i, (a, b) in enumerate(zip(got, want[split])) if a != b), None)}"
    m = json.load(open(os.path.join(data, "manifest.json")))
    assert [s["path"] for s in m["sources"]] == inputs, m["sources"]
    print(f"{len(want['train'])} train and {len(want['val'])} val tokens as tiktoken's")


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    elif sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]), sys.argv[6:])
    else:
        sys.exit(f"unknown command {sys.argv[1]}")
