#pragma once
// The one string hash of the code base: 64-bit FNV-1a, plus the avalanche step the hashing
// embedder applies to it.
//
// Rationale. Several components need a fast, stable (platform- and run-independent) hash of
// bytes: feature hashing (text/), cache keys (llm/'s CachingChatClient, whose file names are
// persisted), line templates (tracker/'s line parser), checkpoints of a line index (tracker/'s
// log_scan, persisted). FNV-1a is simple, byte-at-a-time (so it can be fed incrementally while a
// line is scanned) and its values are fixed by its constants. Values must never change: caches
// and stored indexes on disk, tuned similarity thresholds and golden test values depend on them.
//
// Two offset bases are in use. The chat cache keys use the standard one. Schedmate's own hashes
// (feature hashing in text/, line templates and the line index in tracker/) have always started
// from 1469598103934665603: the standard basis with its last decimal digit dropped. It hashes as
// well as the standard one, and changing it would move every hashed feature (the hashing
// embedder's tuned 0.8 threshold) and orphan every stored line index, so it stays, named.

#include <cstdint>
#include <string_view>

namespace schedmate::text {

inline constexpr uint64_t kFnv1aOffsetBasis = 0xcbf29ce484222325ULL;  // 14695981039346656037
inline constexpr uint64_t kFnv1aPrime = 0x100000001b3ULL;             // 1099511628211
// The basis of schedmate's feature, template and line-index hashes (see above).
inline constexpr uint64_t kFeatureHashBasis = 1469598103934665603ULL;

// One FNV-1a step: folds byte `c` into the running hash `h`.
constexpr void Fnv1aStep(uint64_t& h, unsigned char c) {
  h ^= c;
  h *= kFnv1aPrime;
}

// FNV-1a of `bytes` starting from `basis` (default: the standard FNV-1a-64). A basis XOR a small
// seed gives an independent-looking hash family over the same bytes (kFeatureHashBasis ^ 1, ^ 2).
// Fnv1a64(b, Fnv1a64(a, basis)) == Fnv1a64(a + b, basis).
constexpr uint64_t Fnv1a64(std::string_view bytes, uint64_t basis = kFnv1aOffsetBasis) {
  uint64_t h = basis;
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
