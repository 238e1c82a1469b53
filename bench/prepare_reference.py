"""The Python side of bench/run_prepare.sh.

  prepare_reference.py corpus OUT_DIR FILES     the Python docs' reStructuredText and the Linux
                                                 kernel's documentation (Debian's python3.11-doc and
                                                 linux-doc-6.1), one row per source file, as FILES
                                                 Parquet files of about equal size (row groups of
                                                 256 rows), in OUT_DIR
  prepare_reference.py encode TOKDATA NAME OUT THREADS PARQUET...
                                                 what `ember prepare text` does, with pyarrow and
                                                 tiktoken: row group by row group, encode_ordinary
                                                 on THREADS threads + <|endoftext|>, tokens appended
                                                 to OUT (uint32); prints the token count
"""
import gzip
import os
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))
from tokenizer_reference import encoding  # noqa: E402


def sources():
    for root in ("/usr/share/doc/python3.11/html/_sources", "/usr/share/doc/linux-doc-6.1/Documentation"):
        if not os.path.isdir(root):
            sys.exit(f"prepare_reference: {root} is missing (scripts/setup.sh installs its package)")
        for d, dirs, files in sorted(os.walk(root)):
            dirs[:] = sorted(x for x in dirs if x != "translations")
            for f in sorted(files):
                p = os.path.join(d, f)
                raw = gzip.open(p).read() if f.endswith(".gz") else open(p, "rb").read()
                text = raw.decode("utf-8", errors="replace")
                if text.strip():
                    yield text


def corpus(out, files):
    docs = list(sources())
    total = sum(len(t) for t in docs)
    os.makedirs(out, exist_ok=True)
    start, size = 0, 0
    for k in range(files):
        end = start
        while end < len(docs) and (size < total * (k + 1) / files or k == files - 1):
            size += len(docs[end])
            end += 1
        pq.write_table(pa.table({"text": docs[start:end]}), os.path.join(out, f"part_{k:02d}.parquet"),
                       row_group_size=256)
        start = end
    print(f"{len(docs)} documents, {total / 1e6:.1f} M characters in {files} Parquet files")


def encode(tokdata, name, out, threads, files):
    enc = encoding(tokdata, name)
    eot = enc.encode_single_token("<|endoftext|>")
    n = 0
    with open(out, "wb") as f:
        for path in files:
            for batch in pq.ParquetFile(path).iter_batches(columns=["text"], batch_size=256):
                texts = [t for t in batch.column(0).to_pylist() if t is not None]
                ids = []
                for doc in enc.encode_ordinary_batch(texts, num_threads=threads):
                    ids += doc
                    ids.append(eot)
                np.asarray(ids, dtype=np.uint32).tofile(f)
                n += len(ids)
    print(n)


if __name__ == "__main__":
    if sys.argv[1] == "corpus":
        corpus(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "encode":
        encode(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6:])
    else:
        sys.exit(f"unknown command {sys.argv[1]}")
