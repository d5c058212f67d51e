#include "text/vector_index.h"

// Debian's hnswlib 0.6.2 prefetches one link past the end of a node's link list on its SSE path
// (a hint only, but AddressSanitizer reports the read). Sanitizer builds use the plain path.
#if defined(__SANITIZE_ADDRESS__) && !defined(NO_MANUAL_VECTORIZATION)
#define NO_MANUAL_VECTORIZATION
#endif
#include <hnswlib/hnswlib.h>

#include <algorithm>
#include <exception>
#include <unordered_set>

namespace schedmate::text {
namespace {

void SortNeighbours(std::vector<Neighbour>& v) {
  std::sort(v.begin(), v.end(), [](const Neighbour& a, const Neighbour& b) {
    if (a.similarity != b.similarity) return a.similarity > b.similarity;
    return a.id < b.id;
  });
}

}  // namespace

VectorIndex::VectorIndex(VectorIndexOptions options) : options_(options) {}
VectorIndex::~VectorIndex() = default;

Status VectorIndex::MoveToHnsw() {
  try {
    space_ = std::make_unique<hnswlib::InnerProductSpace>(options_.dimension);
    capacity_ = std::max<size_t>(1024, count_ * 2);
    hnsw_ = std::make_unique<hnswlib::HierarchicalNSW<float>>(
        space_.get(), capacity_, options_.hnsw_m, options_.hnsw_ef_construction, options_.seed);
    hnsw_->setEf(options_.hnsw_ef_search);
    for (size_t i = 0; i < ids_.size(); ++i) {
      hnsw_->addPoint(flat_.data() + i * options_.dimension, ids_[i]);
    }
  } catch (const std::exception& e) {
    hnsw_.reset();
    return Status::Internal(std::string("hnsw build: ") + e.what());
  }
  ids_.clear();
  ids_.shrink_to_fit();
  flat_.clear();
  flat_.shrink_to_fit();
  return Status::Ok();
}

Status VectorIndex::Add(uint64_t id, std::span<const float> vector) {
  if (vector.size() != options_.dimension) {
    return Status::InvalidArgument("vector index: dimension " + std::to_string(vector.size()) +
                                   ", expected " + std::to_string(options_.dimension));
  }
  if (hnsw_ == nullptr) {
    if (std::find(ids_.begin(), ids_.end(), id) != ids_.end()) {
      return Status::AlreadyExists("vector index: duplicate id " + std::to_string(id));
    }
    ids_.push_back(id);
    flat_.insert(flat_.end(), vector.begin(), vector.end());
    ++count_;
    if (!options_.force_exact && count_ >= options_.exact_threshold) return MoveToHnsw();
    return Status::Ok();
  }
  try {
    if (hnsw_->label_lookup_.count(id) != 0) {
      return Status::AlreadyExists("vector index: duplicate id " + std::to_string(id));
    }
    if (count_ >= capacity_) {
      capacity_ *= 2;
      hnsw_->resizeIndex(capacity_);
    }
    hnsw_->addPoint(vector.data(), id);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("hnsw add: ") + e.what());
  }
  ++count_;
  return Status::Ok();
}

Result<std::vector<Neighbour>> VectorIndex::Search(std::span<const float> query, size_t k) const {
  if (query.size() != options_.dimension) {
    return Status::InvalidArgument("vector index: query dimension " + std::to_string(query.size()) +
                                   ", expected " + std::to_string(options_.dimension));
  }
  std::vector<Neighbour> out;
  if (k == 0 || count_ == 0) return out;
  if (hnsw_ == nullptr) {
    const size_t d = options_.dimension;
    out.reserve(ids_.size());
    for (size_t i = 0; i < ids_.size(); ++i) {
      const float* v = flat_.data() + i * d;
      float s = 0;
      for (size_t j = 0; j < d; ++j) s += v[j] * query[j];
      out.push_back({ids_[i], s});
    }
    size_t keep = std::min(k, out.size());
    std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(keep), out.end(),
                      [](const Neighbour& a, const Neighbour& b) {
                        if (a.similarity != b.similarity) return a.similarity > b.similarity;
                        return a.id < b.id;
                      });
    out.resize(keep);
    return out;
  }
  try {
    auto pq = hnsw_->searchKnn(query.data(), std::min(k, count_));
    while (!pq.empty()) {
      out.push_back({static_cast<uint64_t>(pq.top().second), 1.0f - pq.top().first});
      pq.pop();
    }
  } catch (const std::exception& e) {
    return Status::Internal(std::string("hnsw search: ") + e.what());
  }
  SortNeighbours(out);
  return out;
}

}  // namespace schedmate::text
