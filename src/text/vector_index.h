#pragma once
// VectorIndex: k nearest neighbours by cosine similarity over unit vectors, keyed by uint64 id.
//
// Two engines behind one class. While the index holds fewer than `exact_threshold` vectors it
// searches exactly (brute force over a flat array); when it grows past that it moves the vectors
// into an HNSW graph (hnswlib, inner-product space, fixed random seed) and searches approximately
// with `ef_search` candidates. Results are ordered by similarity descending, ties by id ascending,
// so equal inputs give equal outputs. Adding an id twice is kAlreadyExists.
//
// Thread-safety: Search() is const but hnswlib's search is not documented as safe during Add();
// use one thread, or external locking.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/result.h"
#include "core/status.h"

namespace hnswlib {
template <typename T>
class HierarchicalNSW;
template <typename T>
class SpaceInterface;
}  // namespace hnswlib

namespace schedmate::text {

struct Neighbour {
  uint64_t id = 0;
  float similarity = 0;  // cosine, in [-1, 1]
};

struct VectorIndexOptions {
  size_t dimension = 256;
  size_t exact_threshold = 4096;  // switch to HNSW at this many vectors; 0 = HNSW from the start
  size_t hnsw_m = 16;
  size_t hnsw_ef_construction = 100;
  size_t hnsw_ef_search = 64;
  uint64_t seed = 100;
  bool force_exact = false;  // never switch to HNSW
};

class VectorIndex {
 public:
  explicit VectorIndex(VectorIndexOptions options = {});
  ~VectorIndex();
  VectorIndex(const VectorIndex&) = delete;
  VectorIndex& operator=(const VectorIndex&) = delete;

  // kInvalidArgument on a wrong dimension; kAlreadyExists on a duplicate id.
  Status Add(uint64_t id, std::span<const float> vector);
  // Up to k neighbours (fewer when the index is smaller). kInvalidArgument on a wrong dimension.
  Result<std::vector<Neighbour>> Search(std::span<const float> query, size_t k) const;

  size_t size() const { return count_; }
  bool is_approximate() const { return hnsw_ != nullptr; }
  size_t dimension() const { return options_.dimension; }

 private:
  Status MoveToHnsw();
  VectorIndexOptions options_;
  size_t count_ = 0;
  std::vector<uint64_t> ids_;  // exact mode
  std::vector<float> flat_;    // exact mode, count_ x dimension
  std::unique_ptr<hnswlib::SpaceInterface<float>> space_;
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> hnsw_;
  size_t capacity_ = 0;  // hnsw max elements
};

}  // namespace schedmate::text
