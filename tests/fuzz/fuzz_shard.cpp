// Token shards from other tools: llm.c's .bin (256 x int32 header), a 1-D .npy, nanoGPT's
// headerless uint16 .bin. The first byte picks the kind, the rest is the file. Every token the
// shard reports must be readable, and copy() must agree with token().
#include "ember/data/shard.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ember;
  if (size == 0) return 0;
  static const char* const kNames[] = {"input.bin", "input.npy", "input.bin"};
  const int kind = data[0] % 3;
  const auto file = fuzz::input_file(kNames[kind], fuzz::as_text(data + 1, size - 1));
  const std::string spec = (kind == 2 ? "nanogpt:" : "") + file.string();
  fuzz::expect_clean_errors([&] {
    const ShardFile shard(spec);
    fuzz::require(shard.size() >= 0 && static_cast<size_t>(shard.size() * shard.bytes_per_token()) <= size,
                  "the tokens lie inside the file");
    if (shard.size() == 0) return;
    const uint32_t top = shard.max_token();
    std::vector<int64_t> copied(static_cast<size_t>(shard.size()));
    shard.copy(0, shard.size(), copied.data());
    for (int64_t i = 0; i < shard.size(); ++i) {
      fuzz::require(static_cast<int64_t>(shard.token(i)) == copied[static_cast<size_t>(i)], "copy() equals token()");
      fuzz::require(shard.token(i) <= top, "max_token() bounds every token");
    }
  });
  return 0;
}
