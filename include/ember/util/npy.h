// NumPy .npy files (format versions 1-3): little-endian fp16 / fp32 / fp64 / int arrays, C or
// Fortran order. Enough to read a matrix someone saved with numpy.save.
#pragma once
#include <ATen/ATen.h>

#include <filesystem>

namespace ember {

// Throws DataError naming the file on a bad magic, an unsupported dtype (big-endian, objects,
// structured), or a file shorter than its header says (truncated).
at::Tensor load_npy(const std::filesystem::path& path);

}  // namespace ember
