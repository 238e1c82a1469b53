// SHA-256 (OpenSSL's libcrypto) for checkpoint checksums and config/manifest hashes.
#pragma once
#include <filesystem>
#include <string>

namespace ember {

std::string sha256_hex(const std::string& bytes);
std::string sha256_file_hex(const std::filesystem::path& path);

}  // namespace ember
