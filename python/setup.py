"""Installs the package with its native library: libember_ops.so from ember's build tree ($EMBER_BUILD,
else build/ beside this folder), built there first with CMake when the tree is configured but the
library is missing. `pip install --no-build-isolation ./python` after `bash scripts/setup.sh`."""
import os
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
LIBRARY = "libember_ops.so"


def built_library():
    build = Path(os.environ.get("EMBER_BUILD", HERE.parent / "build"))
    library = Path(os.environ.get("EMBER_OPS_LIBRARY", build / "python" / LIBRARY))
    if not library.is_file() and (build / "CMakeCache.txt").is_file():
        subprocess.run(["cmake", "--build", str(build), "--target", "ember_ops"], check=True)
    if not library.is_file():
        raise SystemExit(f"ember: {library} not found and {build} is not a configured ember build: run "
                         "`bash scripts/setup.sh` first, or set EMBER_BUILD / EMBER_OPS_LIBRARY")
    return library


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        target = Path(self.build_lib) / "ember" / LIBRARY
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built_library(), target)


setup(cmdclass={"build_py": BuildWithLibrary})
