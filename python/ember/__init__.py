"""ember for PyTorch: ember's kernels as torch.ops.ember operators (CPU and CUDA kernels, autograd,
torch.compile-ready) and thin modules over them: LEV embeddings, Titans' memory, Hope-attention's CMS, the
tapered width schedule, the linear cross-entropy and the capacity analysis. docs/python.md has the guide."""
from ._library import load as _load

library_path = _load()
from . import _registrations  # noqa: E402,F401  (autograd and fake implementations)
from .capacity import Capacity, Epsilon, capacity, epsilon, input_embedding  # noqa: E402
from .cms import CMS, cms_level  # noqa: E402
from .lev import LEVEmbedding, lev_base, lev_parameter_count, lev_spline  # noqa: E402
from .loss import LinearCrossEntropy, linear_cross_entropy  # noqa: E402
from .taper import taper_widths  # noqa: E402
from .titans import MemoryState, TitansMemory, titans_memory  # noqa: E402

__all__ = ["CMS", "Capacity", "Epsilon", "LEVEmbedding", "LinearCrossEntropy", "MemoryState", "TitansMemory",
           "capacity", "cms_level", "epsilon", "input_embedding", "lev_base", "lev_parameter_count", "lev_spline",
           "library_path", "linear_cross_entropy", "taper_widths", "titans_memory"]
