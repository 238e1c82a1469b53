"""Writes the seed corpora of tests/fuzz (corpus/<target>/seed-*): small real files made by the
tools that write them outside ember (numpy, safetensors, llm.c's and nanoGPT's layouts, published
rank files and configs). Run from anywhere with the venv's Python; inputs the fuzzer found
(crash-*, regression-*) sit beside the seeds and are never rewritten here.
    python tests/fuzz/make_seeds.py
"""
import io
import json
import pathlib
import struct

import numpy as np
import torch
from safetensors.torch import save

root = pathlib.Path(__file__).resolve().parents[2]
corpus = root / "tests" / "fuzz" / "corpus"


def put(target, name, data):
    folder = corpus / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"seed-{name}").write_bytes(data if isinstance(data, bytes) else data.encode())


def npy_bytes(array, version=None):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, array)
    else:
        np.lib.format.write_array(buf, array, version=version)
    return buf.getvalue()


def safetensors_seeds():
    put("safetensors", "mixed", save({"w": torch.arange(6, dtype=torch.float32).reshape(2, 3),
                                      "b": torch.ones(4, dtype=torch.bfloat16),
                                      "i": torch.tensor([1, -2, 3], dtype=torch.int64)}, {"format": "pt"}))
    put("safetensors", "scalar_empty_fp16", save({"s": torch.tensor(2.5, dtype=torch.float16),
                                                  "e": torch.zeros(0, 4, dtype=torch.float16)}))
    put("safetensors", "embed", save({"model.embed_tokens.weight": torch.randn(8, 4, generator=torch.Generator().manual_seed(0))}))
    whole = save({"x": torch.arange(16, dtype=torch.float32)})
    put("safetensors", "truncated", whole[:-7])


def npy_seeds():
    put("npy", "u2", npy_bytes(np.arange(10, dtype="<u2")))
    put("npy", "f4_2d", npy_bytes(np.arange(12, dtype="<f4").reshape(3, 4)))
    put("npy", "f8_fortran", npy_bytes(np.asfortranarray(np.arange(6, dtype="<f8").reshape(2, 3))))
    put("npy", "i4_v2", npy_bytes(np.array([-1, 2, 70000], dtype="<i4"), version=(2, 0)))
    put("npy", "f2_scalar", npy_bytes(np.array(1.5, dtype="<f2")))
    put("npy", "u1_empty", npy_bytes(np.zeros((0, 3), dtype="u1")))


def llmc_shard(tokens, wide):
    header = np.zeros(256, dtype="<i4")
    header[0], header[1], header[2] = (20240801, 7, len(tokens)) if wide else (20240520, 1, len(tokens))
    return header.tobytes() + np.asarray(tokens, dtype="<u4" if wide else "<u2").tobytes()


def shard_seeds():  # first byte: 0 llm.c .bin, 1 .npy, 2 nanoGPT headerless uint16
    put("shard", "llmc_u16", b"\x00" + llmc_shard([50256, 15496, 11, 995, 0, 65535], wide=False))
    put("shard", "llmc_u32", b"\x00" + llmc_shard([100257, 9906, 11, 1917, 200000], wide=True))
    put("shard", "npy_u2", b"\x01" + npy_bytes(np.array([1, 2, 3, 65535], dtype="<u2")))
    put("shard", "npy_i4", b"\x01" + npy_bytes(np.array([7, 0, 123456], dtype="<i4")))
    put("shard", "nanogpt", b"\x02" + np.array([50256, 464, 2068, 7586], dtype="<u2").tobytes())


def rank_file_seeds():
    for name in ("r50k_base", "cl100k_base", "o200k_base"):  # every byte and the first merges
        lines = (root / "third_party" / "tokenizers" / f"{name}.tiktoken").read_text().splitlines()
        put("tiktoken_ranks", name, "\n".join(lines[:300]) + "\n")


def tokenizer_seeds():
    put("tokenizer_encode", "english", "The quick brown fox jumps over the lazy dog. It's 2026; isn't it?\n")
    put("tokenizer_encode", "code", "def f(x):\n    return x ** 2  # square\n\n\tif a!=b: print('ok')\r\n")
    put("tokenizer_encode", "unicode", "Grüße, 世界! 안녕하세요 🙂 naïve café — ｆｕｌｌ width\u00a0nbsp")
    put("tokenizer_encode", "specials", "a<|endoftext|>b <|fim_prefix|><|endofprompt|>")
    put("tokenizer_encode", "digits_space", "1234567890 000   \n\n\n   99999999999999   end   ")
    put("tokenizer_encode", "invalid_utf8", b"\xff\xfe ok \xc3( \xe2\x82 \xf0\x9f\x98 \x80\x80 done")
    plans = (root / "third_party" / "tokenizers" / "TestPlans.txt").read_text().splitlines()
    put("tokenizer_encode", "testplans", "\n".join(plans[:40]) + "\n")


LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_act": "silu",
         "attention_bias": False, "mlp_bias": False, "bos_token_id": 1, "eos_token_id": 2,
         "initializer_range": 0.02, "pretraining_tp": 1, "rope_scaling": None, "torch_dtype": "bfloat16",
         "use_cache": True}


def hf_config_seeds():  # the shapes of published Llama checkpoints, and ember's remote-code class
    tinyllama = dict(LLAMA, hidden_size=2048, intermediate_size=5632, max_position_embeddings=2048,
                     num_attention_heads=32, num_hidden_layers=22, num_key_value_heads=4, rms_norm_eps=1e-5,
                     rope_theta=10000.0, tie_word_embeddings=False, vocab_size=32000)
    smollm = dict(LLAMA, hidden_size=576, intermediate_size=1536, max_position_embeddings=2048,
                  num_attention_heads=9, num_hidden_layers=30, num_key_value_heads=3, rms_norm_eps=1e-5,
                  rope_theta=10000.0, tie_word_embeddings=True, vocab_size=49152)
    llama32 = dict(LLAMA, hidden_size=2048, intermediate_size=8192, max_position_embeddings=131072,
                   num_attention_heads=32, num_hidden_layers=16, num_key_value_heads=8, rms_norm_eps=1e-5,
                   rope_theta=500000.0, tie_word_embeddings=True, vocab_size=128256, head_dim=64,
                   rope_scaling={"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                                 "original_max_position_embeddings": 8192, "rope_type": "llama3"})
    # as `ember export hf` writes a tapered, gated-attention model
    ember = dict(LLAMA, architectures=["EmberForCausalLM"], hidden_size=128,
                 intermediate_sizes=[512, 384, 256, 128], intermediate_size=512, attention_gate="headwise",
                 max_position_embeddings=256, num_attention_heads=4, num_hidden_layers=4, num_key_value_heads=4,
                 rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=False, vocab_size=256,
                 auto_map={"AutoConfig": "modeling_ember.EmberConfig",
                           "AutoModelForCausalLM": "modeling_ember.EmberForCausalLM"},
                 rope_parameters={"rope_theta": 10000.0, "rope_type": "default"}, head_dim=32)
    for name, cfg in (("tinyllama", tinyllama), ("smollm", smollm), ("llama32_rope_scaling", llama32),
                      ("remote_code_no_ember_section", ember)):
        put("hf_config", name, json.dumps(cfg, indent=2))


def hf_index_seeds():  # as save_pretrained writes it, for the two shards fuzz_hf_index puts beside it
    weight_map = {"model.embed_tokens.weight": "model-00001-of-00002.safetensors",
                  "model.norm.weight": "model-00002-of-00002.safetensors",
                  "lm_head.weight": "model-00002-of-00002.safetensors"}
    put("hf_index", "two_shards", json.dumps({"metadata": {"total_size": 208}, "weight_map": weight_map}, indent=2))
    put("hf_index", "missing_shard", json.dumps({"metadata": {"total_size": 96},
                                                 "weight_map": {"model.embed_tokens.weight": "model-00009.safetensors"}}))


def yaml_seeds():
    for path in sorted((root / "configs").rglob("*.yaml")):
        if "sweeps" not in path.parts:
            put("yaml_config", path.relative_to(root / "configs").as_posix().replace("/", "_"), path.read_text())
    put("yaml_config", "tiny_with_sets", (root / "configs" / "tiny.yaml").read_text() +
        "#--set\nmodel.mlp.d_ff=256\ntrain.steps=10\nmodel.embedding={kind: lev}\noptim.lr=1e-3\n")


def corpus_format_seeds():  # first byte: 0 text, 1 .jsonl.gz, 2 .jsonl.zst, 3 .parquet, 4 .txt.gz
    import gzip
    import subprocess

    import pyarrow as pa
    import pyarrow.parquet as pq
    docs = ["The quick brown fox.\n\nIt jumps été 日本.", "second document\n", ""]
    lines = "".join(json.dumps({"text": d}) + "\n" for d in docs).encode()
    put("corpus_formats", "text", b"\x00" + "\n".join(docs).encode())
    put("corpus_formats", "gzip_two_members", b"\x01" + gzip.compress(lines[:30]) + gzip.compress(lines[30:]))
    put("corpus_formats", "zstd", b"\x02" + subprocess.run(["zstd", "-q", "-c"], input=lines, check=True,
                                                             capture_output=True).stdout)
    buf = io.BytesIO()
    pq.write_table(pa.table({"id": [1, 2, 3], "text": docs}), buf, row_group_size=2)
    put("corpus_formats", "parquet", b"\x03" + buf.getvalue())
    put("corpus_formats", "text_gzip", b"\x04" + gzip.compress("\n".join(docs).encode()))


def task_seeds():
    put("task_jsonl", "hellaswag", json.dumps({"ctx": "A man is sitting on a roof. He", "label": "3",
                                               "endings": ["is using wrap to wrap a pair of skis.",
                                                           "is ripping level tiles off.", "is holding a rubik's cube.",
                                                           "starts pulling up roofing on a roof."]}) + "\n")
    put("task_jsonl", "piqa_arc", json.dumps({"context": "To separate egg whites from the yolk,",
                                              "choices": [" use a water bottle.", " use a fork."], "label": 0}) + "\n" +
        json.dumps({"context": "Question: Which gas do plants absorb?\nAnswer:",
                    "endings": ["oxygen", "carbon dioxide", "nitrogen", "helium"], "label": 1}) + "\n")
    put("task_jsonl", "lambada_jsonl", json.dumps({"text": "He handed her the key and said she should keep the key"}) +
        "\n" + json.dumps({"text": "“Come in,” said Anna, and Anna smiled"}) + "\n")
    put("task_jsonl", "lambada_plain", "The cat sat on the mat and the cat slept\nShe opened the door. The door creaked\n")
    put("task_jsonl", "recall", json.dumps({"tokens": [0, 20, 3, 17, 32, 3, 17, 0, 20], "answers": [6, 8]}) + "\n")


if __name__ == "__main__":
    for make in (safetensors_seeds, npy_seeds, shard_seeds, rank_file_seeds, tokenizer_seeds, hf_config_seeds,
                 hf_index_seeds, yaml_seeds, task_seeds, corpus_format_seeds):
        make()
    for folder in sorted(corpus.iterdir()):
        if folder.is_dir():
            files = list(folder.iterdir())
            print(f"{folder.name}: {len(files)} files, {sum(f.stat().st_size for f in files)} bytes")
