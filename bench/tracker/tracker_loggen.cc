// tracker_loggen OUT BYTES [SEED]: writes a deterministic mixed synthetic training log.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "log_generator.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: tracker_loggen OUT BYTES [SEED]\n");
    return 2;
  }
  const size_t total = std::strtoull(argv[2], nullptr, 10);
  const uint64_t seed = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1;
  std::FILE* f = std::fopen(argv[1], "wb");
  if (!f) {
    std::perror(argv[1]);
    return 1;
  }
  std::string chunk;
  size_t written = 0;
  uint64_t k = 0;
  while (written < total) {
    chunk.clear();
    schedmate::tracker::bench::GenerateMixedLog(std::min<size_t>(16u << 20, total - written),
                                                seed + k++, chunk);
    if (std::fwrite(chunk.data(), 1, chunk.size(), f) != chunk.size()) {
      std::perror(argv[1]);
      return 1;
    }
    written += chunk.size();
  }
  std::fclose(f);
  return 0;
}
