"""Reference side of the tokenizer tests: mixed text and tiktoken's ids for it.

  tokenizer_reference.py text OUT MB SEED        write ~MB of mixed text (prose, code, Unicode,
                                                  whitespace runs) to OUT
  tokenizer_reference.py encode DATA NAME IN OUT  tiktoken.encode_ordinary(IN) for encoding NAME
                                                  (rank file + pat_str from DATA, offline) -> OUT
  tokenizer_reference.py bench DATA NAME IN       tiktoken single-thread encode MB/s on IN
"""
import binascii
import json
import os
import random
import sys
import time


def mixed_text(mb, seed):
    rng = random.Random(seed)
    prose = []
    for root in ("/usr/share/doc/python3.11/html/_sources", "/usr/share/common-licenses"):
        for dirpath, _, files in sorted(os.walk(root)):
            for f in sorted(files)[:40]:
                try:
                    prose.append(open(os.path.join(dirpath, f), encoding="utf-8").read())
                except (UnicodeDecodeError, OSError):
                    pass
            if sum(map(len, prose)) > 4e6:
                break
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.join(here, "..", "..", "src")
    code = [open(os.path.join(d, f)).read() for d, _, fs in sorted(os.walk(src)) for f in sorted(fs)]
    words = "the of and to in is was that for it with as his on be at by had are but from".split()
    scripts = [(0x41, 0x7A), (0xC0, 0x24F), (0x370, 0x3FF), (0x400, 0x4FF), (0x590, 0x6FF),
               (0x900, 0x97F), (0x3040, 0x30FF), (0x4E00, 0x9FFF), (0xAC00, 0xD7A3), (0x1F300, 0x1F64F)]
    out, size = [], 0
    while size < mb * 1e6:
        kind = rng.random()
        if kind < 0.45 and prose:
            doc = rng.choice(prose)
            start = rng.randrange(max(1, len(doc) - 2000))
            chunk = doc[start:start + rng.randrange(200, 2000)]
        elif kind < 0.7:
            doc = rng.choice(code)
            start = rng.randrange(max(1, len(doc) - 1500))
            chunk = doc[start:start + rng.randrange(100, 1500)]
        elif kind < 0.9:
            lo, hi = rng.choice(scripts)
            chunk = "".join(chr(rng.randint(lo, hi)) if rng.random() < 0.8 else rng.choice(" ,.!?'\n0123456789")
                            for _ in range(rng.randrange(10, 300)))
        else:
            chunk = "".join(rng.choice([" " * rng.randrange(1, 40), "\n" * rng.randrange(1, 5), "\t", "\r\n",
                                        rng.choice(words), "'s", "'LL", "123456", " \u00a0 ",
                                        " " * rng.randrange(100, 700), "ab" * rng.randrange(50, 300)])
                            for _ in range(rng.randrange(5, 60)))
        out.append(chunk)
        size += len(chunk.encode("utf-8"))
    return "".join(out)


def encoding(data, name):
    import tiktoken
    spec = json.load(open(os.path.join(data, "encodings.json")))[name]
    with open(os.path.join(data, name + ".tiktoken"), "rb") as f:  # base64.b64decode's own decoder, in one pass
        ranks = {binascii.a2b_base64(tok): int(rank)
                 for tok, rank in (line.split() for line in f.read().splitlines() if line.strip())}
    return tiktoken.Encoding(name, pat_str=spec["pat_str"], mergeable_ranks=ranks,
                             special_tokens=spec["special_tokens"])


def encode(data, name, text_file, out):
    ids = encoding(data, name).encode_ordinary(open(text_file, encoding="utf-8", newline="").read())
    with open(out, "w") as f:
        f.write(" ".join(map(str, ids)) + "\n")


def main():
    cmd = sys.argv[1]
    if cmd == "text":
        with open(sys.argv[2], "w", encoding="utf-8") as f:
            f.write(mixed_text(float(sys.argv[3]), int(sys.argv[4])))
    elif cmd == "encode":
        encode(*sys.argv[2:6])
    elif cmd == "bench":
        enc = encoding(sys.argv[2], sys.argv[3])
        text = open(sys.argv[4], encoding="utf-8", newline="").read()
        enc.encode_ordinary(text[:100000])  # warm up
        best = 1e9
        for _ in range(3):
            t0 = time.perf_counter()
            enc.encode_ordinary(text)
            best = min(best, time.perf_counter() - t0)
        print(f"{len(text.encode('utf-8')) / best / 1e6:.2f}")
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
