"""A run trained by the ember CLI, read from Python: its LEV weights load into ember.LEVEmbedding, whose
table equals the one `ember export hf` writes, and ember.epsilon of the run equals `ember capacity`."""
import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

import ember
from conftest import REPO, run_ember, write_shards


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny LEV run and a tied one (8 steps each, 300-token vocabulary), trained from another folder.
    Batches of 2 x 32 tokens: the tests compare what Python and the CLI read from the same checkpoint,
    which any batch size trains (tiny.yaml's 16 x 128 cost three times as long)."""
    root = tmp_path_factory.mktemp("runs")
    write_shards(root, 300, 40000, 4000)
    common = ["-c", REPO / "configs/tiny.yaml", "--set", f"data.train=[{root}/train_*.bin]",
              "--set", f"data.val=[{root}/val_*.bin]", "--set", "model.vocab_size=300", "--set", "train.steps=8",
              "--set", "train.micro_batch=2", "--set", "train.seq_len=32",
              "--set", "eval.every=0", "--set", "eval.batches=2", "--set", "optim.warmup_steps=2",
              "--set", "train.threads=1"]
    run_ember("train", *common, "--set", "model.embedding.kind=lev", "--set", "model.embedding.lev.d_seed=32",
              "--set", "model.embedding.lev.rank=16", "--run-dir", root / "lev", cwd=root)
    run_ember("train", *common, "--run-dir", root / "tied", cwd=root)
    return root


def test_a_trained_lev_generator_loads_and_gives_the_exported_table(trained):
    module = ember.LEVEmbedding.from_run(trained / "lev")
    assert module.d_seed == 32 and module.spline.shape[-1] == 16  # the run's options, not the defaults
    run_ember("export", "hf", trained / "lev", "--out", trained / "lev_hf")
    exported = load_file(str(trained / "lev_hf" / "model.safetensors"))["model.embed_tokens.weight"]
    with torch.no_grad():
        torch.testing.assert_close(module.table(), exported, rtol=1e-5, atol=1e-6)
        ids = torch.tensor([[0, 299, 17], [17, 5, 0]])
        torch.testing.assert_close(module(ids), exported[ids], rtol=1e-5, atol=1e-6)


@pytest.fixture(scope="module")
def cli_capacity(trained):
    """`ember capacity --json` of both runs in one process (0.45 s each), by the folder each object names."""
    reports = json.loads(run_ember("capacity", "--json", trained / "lev", trained / "tied"))
    return {Path(report["input"]).name: report for report in reports}


@pytest.mark.parametrize("run", ["lev", "tied"])
def test_epsilon_of_a_run_equals_the_cli(trained, cli_capacity, run):
    cli = cli_capacity[run]
    ours = ember.epsilon(trained / run)
    assert ours.mu == pytest.approx(cli["mu"], abs=2e-6) and ours.sigma == pytest.approx(cli["sigma"], rel=2e-5)
    assert ours.pairs == cli["pairs"]
    assert ember.capacity(cli["d"], ours.epsilon).cls == cli["class"]


def test_a_run_without_checkpoints_is_named(tmp_path):
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "config.yaml").write_text("model: {embedding: {kind: lev}}\n")
    with pytest.raises(FileNotFoundError, match="holds no checkpoint"):
        ember.LEVEmbedding.from_run(tmp_path)
