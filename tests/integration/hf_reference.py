"""transformers' side of the Hugging Face interop tests (tests/integration/hf.sh).

  hf_reference.py logits HF_DIR EMBER.safetensors [HF_DIR EMBER.safetensors ...]
                                 load HF_DIR with AutoModelForCausalLM, run the inputs ember dumped
                                 (ember eval --logits), print one line of {class, max_abs_diff,
                                 max_abs, loss} per pair; exit 1 past tolerance
  hf_reference.py random-llama OUT [--sharded] [--fp16]
                                 a random LlamaForCausalLM (GQA, untied head, non-unit norms) saved
                                 with save_pretrained
  hf_reference.py encode TOKENIZER_DIR IN OUT        ids of IN by the `tokenizers` library and by
                                                     AutoTokenizer (both must agree) -> OUT
  hf_reference.py same-tensors A.safetensors B.safetensors   exit 1 unless bit-identical
  hf_reference.py tiktoken DATA NAME IN OUT          tiktoken's ids of IN (tokenizer_reference.py's
                                                     encode, here to share this process) -> OUT
  hf_reference.py added-token TOKENIZER_DIR          tokenizer.json encodes "a<|eot_id|>b" as a, the
                                                     added token 128009, b
  hf_reference.py serve          the commands above, one a line of stdin as OUT<TAB>WHAT<TAB>COMMAND
                                 (shell-quoted), run in this one process as they arrive: transformers
                                 is imported once, not once a command (~4 s each); each command's
                                 stdout goes to OUT ('-': discarded). A line "sync" is answered with
                                 "done" on stdout once the commands before it have run, or "failed"
                                 if one of them failed: the first that fails prints "WHAT: its error"
                                 last on stderr, and the commands after it are read but not run
"""
import functools
import json
import sys

import torch

# fp32 logits of a model with |logits| ~ 10: SDPA vs eager and RoPE tables in fp32 vs fp64 differ in
# the last bits of each of a few hundred accumulations, ~1e-6 relative; a wrong weight or layout is
# off by O(1).
ATOL = 1e-4


def load(hf_dir):
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(hf_dir, trust_remote_code=True, dtype=torch.float32)
    return model.eval()


def logits(hf_dir, ember_file):
    from safetensors.torch import load_file
    dumped = load_file(ember_file)
    model = load(hf_dir)
    with torch.no_grad():
        ours = dumped["logits"].float()
        theirs = model(dumped["inputs"].long()).logits.float()
        loss = torch.nn.functional.cross_entropy(theirs.reshape(-1, theirs.size(-1)),
                                                 dumped["targets"].reshape(-1).long()).item()
    diff = (ours - theirs).abs().max().item()
    report = {"class": type(model).__name__, "max_abs_diff": diff, "max_abs": ours.abs().max().item(),
              "loss": loss}
    print(json.dumps(report))
    if ours.shape != theirs.shape or not diff <= ATOL * max(1.0, report["max_abs"] / 10):
        sys.exit(f"logits differ: {report}")


def random_llama(out, sharded, fp16, llama3):
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    # llama3: Llama 3.1's RoPE scaling sized so that all three bands occur (head_dim 16, base 5000:
    # wavelengths 6 to 11,000 tokens against 64 / 4 = 16 and 64 / 1 = 64).
    scaling = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
               "original_max_position_embeddings": 64} if llama3 else None
    config = LlamaConfig(vocab_size=96, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         rms_norm_eps=1e-5, rope_theta=5000.0, rope_scaling=scaling, tie_word_embeddings=False,
                         bos_token_id=None, eos_token_id=None)
    model = LlamaForCausalLM(config)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.randn_like(p) * (0.2 if "norm" in name else 0.08) + (1.0 if "norm" in name else 0.0))
    if fp16:
        model = model.half()
    model.save_pretrained(out, max_shard_size="40KB" if sharded else "5GB")


@functools.lru_cache(maxsize=None)
def tokenizer_json(tokenizer_dir):  # encode and added-token of one directory load it once (o200k: ~0.5 s)
    from tokenizers import Tokenizer
    return Tokenizer.from_file(f"{tokenizer_dir}/tokenizer.json")


def encode(tokenizer_dir, text_file, out):
    from transformers import AutoTokenizer
    text = open(text_file, encoding="utf-8", newline="").read()
    ids = tokenizer_json(tokenizer_dir).encode(text, add_special_tokens=False).ids
    auto = AutoTokenizer.from_pretrained(tokenizer_dir)(text, add_special_tokens=False)["input_ids"]
    if auto != ids:
        sys.exit("AutoTokenizer and tokenizers disagree")
    with open(out, "w") as f:
        f.write(" ".join(map(str, ids)) + "\n")


def added_token(tokenizer_dir):
    ids = tokenizer_json(tokenizer_dir).encode("a<|eot_id|>b", add_special_tokens=False).ids
    if not (128009 in ids and len(ids) == 3):
        sys.exit(f"ids {ids}")


def same_tensors(a, b):
    from safetensors.torch import load_file
    x, y = load_file(a), load_file(b)
    if x.keys() != y.keys():
        sys.exit(f"names differ: {sorted(x.keys() ^ y.keys())}")
    for name in x:
        if x[name].dtype != y[name].dtype or not torch.equal(x[name], y[name]):
            sys.exit(f"tensor {name} differs")
    print(f"{len(x)} tensors bit-identical")


def serve():
    import contextlib
    import os
    import shlex
    replies = os.fdopen(os.dup(1), "w")  # stdout is only the answers to "sync": what else the
    os.dup2(2, 1)                          # libraries write to file descriptor 1 goes to stderr
    try:
        import tokenizers  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        failed = "transformers is not in the venv (scripts/setup.sh installs it)"
        print(failed, file=sys.stderr)
    else:
        failed = None
    for line in sys.stdin:
        if line == "sync\n":
            print("failed" if failed else "done", file=replies, flush=True)
            continue
        if failed:
            continue
        out, what, command = line.rstrip("\n").split("\t")
        argv = shlex.split(command)
        with open(os.devnull if out == "-" else out, "w") as sink, contextlib.redirect_stdout(sink):
            try:
                run(argv[0], argv[1:])
            except SystemExit as e:
                if e.code not in (None, 0):
                    failed = f"{what}: {e.code}"
            except Exception:
                import traceback
                traceback.print_exc()
                failed = f"{what}: {sys.exc_info()[1]!r}"
        if failed:
            print(failed, file=sys.stderr, flush=True)


def main():
    run(sys.argv[1], sys.argv[2:])


def run(cmd, args):
    if cmd == "serve":
        serve(*args)
    elif cmd == "logits":
        for hf_dir, ember_file in zip(args[0::2], args[1::2]):
            logits(hf_dir, ember_file)
    elif cmd == "random-llama":
        random_llama(args[0], "--sharded" in args, "--fp16" in args, "--llama3" in args)
    elif cmd == "encode":
        encode(*args)
    elif cmd == "same-tensors":
        same_tensors(*args)
    elif cmd == "tiktoken":
        from tokenizer_reference import encode as tiktoken_encode  # this script's folder is on sys.path
        tiktoken_encode(*args)
    elif cmd == "added-token":
        added_token(*args)
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
