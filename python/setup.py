"""Builds the package with its native library, libember_ops.so, compiled by CMake from ember's source
tree (the folder above this one) against the torch of the Python that runs the build:
  pip wheel --no-build-isolation --no-deps -w dist ./python    a wheel to install in any venv that has
                                                                this torch (its metadata pins it)
  pip install --no-build-isolation ./python                     straight into this venv
The build tree: $EMBER_BUILD, else build/ beside this folder; configured here (as scripts/setup.sh
does) when it is not yet, so no earlier build is needed. $EMBER_OPS_LIBRARY names a library built
elsewhere instead."""
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent
LIBRARY = "libember_ops.so"
NEEDS_TORCH = ("ember: building the package needs the torch it will run with, importable here: run "
               "`pip wheel --no-build-isolation ./python` (or pip install) in the venv that has it")


def torch_cmake_prefix_path():
    """torch.utils.cmake_prefix_path (<torch>/share/cmake), found without importing torch: pip runs this
    file once per build step, each in a new process, and importing torch there cost each 2 s."""
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        raise SystemExit(NEEDS_TORCH)
    return Path(spec.origin).parent / "share" / "cmake"


def configure(build):
    """Configures `build` as scripts/setup.sh does (Release, Ninja when there is one), without the tests."""
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    subprocess.run(["cmake", "-S", str(SOURCE), "-B", str(build), *generator, "-DCMAKE_BUILD_TYPE=Release",
                    f"-DCMAKE_PREFIX_PATH={torch_cmake_prefix_path()}", f"-DEMBER_PYTHON={sys.executable}",
                    "-DEMBER_BUILD_TESTS=OFF"], check=True)


def built_library():
    if "EMBER_OPS_LIBRARY" in os.environ:
        library = Path(os.environ["EMBER_OPS_LIBRARY"])
        if not library.is_file():
            raise SystemExit(f"ember: EMBER_OPS_LIBRARY={library} is not a file")
        return library
    build = Path(os.environ.get("EMBER_BUILD", SOURCE / "build"))
    if not (build / "CMakeCache.txt").is_file():
        if not (SOURCE / "CMakeLists.txt").is_file():
            raise SystemExit(f"ember: {SOURCE} is not ember's source tree; build from a checkout (python/ inside it)")
        configure(build)
    subprocess.run(["cmake", "--build", str(build), "--target", "ember_ops"], check=True)
    return build / "python" / LIBRARY


def requirements():
    """The torch the library was compiled against, exactly (its C++ ABI changes between releases), as its
    installed metadata gives it (torch is not imported here, as in torch_cmake_prefix_path)."""
    try:
        version = importlib.metadata.version("torch").split("+")[0]
    except importlib.metadata.PackageNotFoundError:
        raise SystemExit(NEEDS_TORCH)
    return [f"torch=={version}", "numpy", "pyyaml", "safetensors"]


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        target = Path(self.build_lib) / "ember" / LIBRARY
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built_library(), target)


class BinaryDistribution(Distribution):
    """A wheel for this platform and Python (it carries a native library), not a pure-Python one."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution, install_requires=requirements())
