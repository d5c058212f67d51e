#pragma once
// Deterministic generator of a mixed synthetic training log for the tracker benchmarks: progress
// lines in several styles (key=value, HF dicts, tqdm bars with '\r' states, Keras bars,
// detectron2/mmdet-like lines), info/warning lines, evaluation output and occasional tracebacks.

#include <cstdint>
#include <string>

namespace schedmate::tracker::bench {

// Appends about `bytes` bytes of log text to `out` (whole lines). Same seed, same text.
void GenerateMixedLog(size_t bytes, uint64_t seed, std::string& out);

}  // namespace schedmate::tracker::bench
