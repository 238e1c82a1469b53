"""`pip install ./python` into a fresh folder: the package imports from there, from any working
directory, with the library it carries, and runs an operator."""
import os
import subprocess
import sys

from conftest import REPO


def test_pip_install_gives_an_importable_package_with_its_library(tmp_path):
    site = tmp_path / "site"
    env = dict(os.environ)
    env.pop("EMBER_OPS_LIBRARY", None)
    env.pop("PYTHONPATH", None)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "--target",
                    str(site), str(REPO / "python")], check=True, env=env, cwd=tmp_path)
    assert (site / "ember" / "libember_ops.so").is_file()
    probe = ("import ember, torch; print(ember.library_path); "
             "print(ember.lev_spline(torch.rand(2, 1, 3), torch.ones(1, 3, 4, 2)).shape)")
    done = subprocess.run([sys.executable, "-c", probe], env=env | {"PYTHONPATH": str(site)}, cwd=tmp_path,
                          capture_output=True, text=True, check=True)
    lines = done.stdout.split("\n")
    assert lines[0] == str(site / "ember" / "libember_ops.so")
    assert lines[1] == "torch.Size([2, 1, 2])"
