"""`pip wheel ./python` from a source tree without a build: setup.py configures and builds libember_ops with
CMake in a fresh build tree, and the wheel pins the torch it was compiled against. Installed into a new
venv outside the checkout that sees the same torch (this venv's packages but ember, through a .pth file), it
imports and runs an operator there, with no variable pointing back at the checkout. torch is not imported
here (1.5 s): the new venv's Python imports it and reports its version."""
import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import REPO


def build_wheel(dist, fresh_build):
    env = {k: v for k, v in os.environ.items() if k not in ("EMBER_OPS_LIBRARY", "PYTHONPATH")}
    env["EMBER_BUILD"] = str(fresh_build)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps", "-w", str(dist),
                    str(REPO / "python")], check=True, env=env, cwd=dist.parent)
    wheels = list(dist.glob("ember-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def shared_site_without_ember(folder):
    """This venv's site-packages (torch and everything else) as another venv would share it, less ember's
    own package: links to every entry but ember's."""
    folder.mkdir()
    for entry in Path(importlib.util.find_spec("torch").origin).resolve().parents[1].iterdir():
        if not entry.name.lower().startswith(("ember-", "ember.", "__editable__.ember")) and entry.name != "ember":
            (folder / entry.name).symlink_to(entry)
    return folder


def test_a_wheel_built_from_a_fresh_tree_installs_and_runs_in_a_new_venv(tmp_path):
    # A fresh build tree beside this build's, at the same depth in the checkout, so ccache serves the
    # compilation this build already did (cmake/EmberCcache.cmake); removed afterwards.
    build = Path(os.environ.get("EMBER_BUILD", REPO / "build")).resolve()
    fresh = build.parent / "build-wheel-check"
    shutil.rmtree(fresh, ignore_errors=True)
    try:
        wheel = build_wheel(tmp_path / "dist", fresh)
        assert (fresh / "CMakeCache.txt").is_file(), "setup.py did not configure the empty build tree"
    finally:
        shutil.rmtree(fresh, ignore_errors=True)

    assert wheel.name.endswith(f"-cp{sys.version_info.major}{sys.version_info.minor}-"
                               f"cp{sys.version_info.major}{sys.version_info.minor}-linux_x86_64.whl"), wheel.name
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        metadata = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        library = z.read("ember/libember_ops.so")
    assert "ember/__init__.py" in names
    # The corpus readers (Arrow from the build venv's pyarrow, zlib, libzstd) are the CLI's: the
    # library must not need them, or it would look for the build venv's pyarrow (python/CMakeLists.txt).
    for dependency in (b"libarrow.so", b"libparquet.so", b"libzstd.so"):
        assert dependency not in library, f"libember_ops.so links {dependency.decode()}"

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)  # pip: this one's
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "shared_torch.pth").write_text(str(shared_site_without_ember(tmp_path / "shared")) + "\n")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("EMBER_") and k != "PYTHONPATH"}
    # --no-index: the wheel's requirements (torch==this version, numpy, ...) must be met by what the venv sees.
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q", "--no-index",
                    str(wheel)], check=True, env=clean, cwd=tmp_path)
    probe = ("import ember, torch; print(ember.__file__); print(ember.library_path); "
             "print(ember.lev_spline(torch.rand(2, 1, 3), torch.ones(1, 3, 4, 2)).shape); print(torch.__version__)")
    done = subprocess.run([str(venv / "bin" / "python"), "-c", probe], env=clean, cwd=tmp_path, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    package, library_path, shape, torch_version = done.stdout.split("\n")[:4]
    assert package.startswith(str(site)) and library_path.startswith(str(site)), done.stdout
    assert shape == "torch.Size([2, 1, 2])"
    # The wheel pins the torch it runs with (this venv's, which it was compiled against).
    assert f"Requires-Dist: torch=={torch_version.split('+')[0]}" in metadata.splitlines(), metadata
