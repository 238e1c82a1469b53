import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # reference.py
# torch and ember (which loads the operators) are imported by the test files that use them:
# test_install.py only runs pip and a new Python, and importing torch here cost it 2 s.

REPO = Path(__file__).resolve().parents[2]


def ember_binary():
    path = Path(os.environ.get("EMBER_BIN", REPO / "build" / "tools" / "ember")).resolve()
    if not path.is_file():
        pytest.fail(f"the ember binary {path} is missing: build it, or set EMBER_BIN")
    return path


def write_shards(folder, vocab, n_train, n_val, seed=0):
    """Uniform random tokens as ember's uint32 shards (256 int32 header: magic, version, count)."""
    rng = np.random.default_rng(seed)
    for split, n in (("train", n_train), ("val", n_val)):
        header = np.zeros(256, dtype=np.int32)
        header[:3] = [20240801, 1, n]
        with open(folder / f"{split}_000.bin", "wb") as f:
            f.write(header.tobytes())
            f.write(rng.integers(vocab, size=n, dtype=np.uint32).tobytes())


def run_ember(*args, cwd=None):
    """Runs the ember CLI; the test fails with its output when it does."""
    done = subprocess.run([str(ember_binary()), *map(str, args)], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"ember {' '.join(map(str, args))} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


@pytest.fixture(autouse=True)
def fresh_seed():
    """torch's seed before each test, in every file that imports torch (its import precedes the tests)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(1234)
