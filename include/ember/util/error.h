// Typed errors for user mistakes. The CLI prints what() as one line and exits non-zero.
#pragma once
#include <stdexcept>
#include <string>

namespace ember {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct ConfigError : Error {
  using Error::Error;
};
struct DataError : Error {
  using Error::Error;
};
struct CheckpointError : Error {
  using Error::Error;
};
struct UsageError : Error {
  using Error::Error;
};
// An index outside its range, such as a token id >= the vocabulary (Python's IndexError).
struct IndexError : Error {
  using Error::Error;
};

}  // namespace ember
