#pragma once
// The one string hash of the code base: 64-bit FNV-1a, plus the avalanche step the hashing
// embedder applies to it.
//
// Rationale. Several components need a fast, stable (platform- and run-independent) hash of
// bytes: feature hashing (text/), cache keys (llm/'s CachingChatClient, whose file names are
// persisted), line templates (tracker/'s line parser), checkpoints of a line index (tracker/'s
// log_scan, persisted). FNV-1a is simple, byte-at-a-time (so it can be fed incrementally while a
// line is scanned) and its values are fixed by its two constants. Values must never change:
// caches and stored indexes on disk and golden test values depend on them.

#include <cstdint>
#include <string_view>

namespace schedmate::text {

inline constexpr uint64_t kFnv1aOffsetBasis = 0xcbf29ce484222325ULL;  // 1469598103934665603
inline constexpr uint64_t kFnv1aPrime = 0x100000001b3ULL;             // 1099511628211

// One FNV-1a step: folds byte `c` into the running hash `h`.
constexpr void Fnv1aStep(uint64_t& h, unsigned char c) {
  h ^= c;
  h *= kFnv1aPrime;
}

// FNV-1a of `bytes`, starting from the offset basis XOR `seed` (seed 0: the standard FNV-1a-64).
// Different seeds give independent-looking hash families over the same bytes.
constexpr uint64_t Fnv1a64(std::string_view bytes, uint64_t seed = 0) {
  uint64_t h = kFnv1aOffsetBasis ^ seed;
  for (char c : bytes) Fnv1aStep(h, static_cast<unsigned char>(c));
  return h;
}

// A final avalanche (the first shift-multiply-shift of MurmurHash3's fmix64) so the low bits
// depend on the high ones too; FNV-1a alone mixes its low bits poorly.
constexpr uint64_t Avalanche64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

}  // namespace schedmate::text
