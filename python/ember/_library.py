"""Finds and loads libember_ops, the shared library that registers ember's operators (torch.ops.ember.*)."""
import os
from pathlib import Path

import torch

LIBRARY = "libember_ops.so"


def candidates():
    """Where the library may be, in order: $EMBER_OPS_LIBRARY, beside this package (pip install), and the
    build tree of the checkout this package sits in ($EMBER_BUILD, else build/)."""
    places = []
    if os.environ.get("EMBER_OPS_LIBRARY"):
        places.append(Path(os.environ["EMBER_OPS_LIBRARY"]))
    here = Path(__file__).resolve().parent
    places.append(here / LIBRARY)
    checkout = here.parent.parent
    if (checkout / "CMakeLists.txt").exists():
        build = Path(os.environ.get("EMBER_BUILD", checkout / "build"))
        places.append(build / "python" / LIBRARY)
    return places


def load():
    """Loads the first library found; the error names every place looked."""
    places = candidates()
    for path in places:
        if path.is_file():
            torch.ops.load_library(str(path))
            return path
    looked = "\n  ".join(str(p) for p in places)
    raise ImportError(f"ember: {LIBRARY} not found; looked in:\n  {looked}\n"
                      "Build it (bash scripts/setup.sh, or cmake --build build --target ember_ops) and "
                      "install the package (pip install --no-build-isolation ./python), or set EMBER_OPS_LIBRARY.")
