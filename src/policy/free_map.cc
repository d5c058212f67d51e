#include "policy/free_map.h"

#include <bit>

#include "core/check.h"

namespace schedmate::policy {

FreeMap::FreeMap(int32_t nodes, int32_t gpus_per_node)
    : gpus_per_node_(gpus_per_node),
      words_((nodes + 63) / 64),
      free_(nodes, gpus_per_node),
      up_(nodes, 1),
      bits_(static_cast<size_t>(gpus_per_node + 1) * ((nodes + 63) / 64), 0),
      counts_(gpus_per_node + 1, 0),
      total_free_(static_cast<int64_t>(nodes) * gpus_per_node),
      total_up_gpus_(static_cast<int64_t>(nodes) * gpus_per_node),
      up_nodes_(nodes) {
  for (int32_t n = 0; n < nodes; ++n) BucketSet(gpus_per_node, n, true);
}

void FreeMap::BucketSet(int32_t f, int32_t node, bool on) {
  uint64_t& w = bits_[static_cast<size_t>(f) * words_ + node / 64];
  const uint64_t bit = uint64_t{1} << (node % 64);
  if (on) {
    w |= bit;
    ++counts_[f];
  } else {
    w &= ~bit;
    --counts_[f];
  }
}

void FreeMap::Take(int32_t node, int32_t gpus) {
  SM_CHECK(up_[node] && gpus > 0 && gpus <= free_[node]) << "node " << node << " gpus " << gpus;
  BucketSet(free_[node], node, false);
  free_[node] -= gpus;
  BucketSet(free_[node], node, true);
  total_free_ -= gpus;
}

void FreeMap::Give(int32_t node, int32_t gpus) {
  SM_CHECK(up_[node] && gpus > 0 && free_[node] + gpus <= gpus_per_node_) << "node " << node;
  BucketSet(free_[node], node, false);
  free_[node] += gpus;
  BucketSet(free_[node], node, true);
  total_free_ += gpus;
}

void FreeMap::SetDown(int32_t node) {
  if (!up_[node]) return;
  SM_CHECK(free_[node] == gpus_per_node_) << "node " << node << " still has jobs";
  BucketSet(free_[node], node, false);
  up_[node] = 0;
  total_free_ -= free_[node];
  total_up_gpus_ -= gpus_per_node_;
  --up_nodes_;
}

void FreeMap::SetUp(int32_t node) {
  if (up_[node]) return;
  up_[node] = 1;
  free_[node] = gpus_per_node_;
  BucketSet(free_[node], node, true);
  total_free_ += free_[node];
  total_up_gpus_ += gpus_per_node_;
  ++up_nodes_;
}

int32_t FreeMap::FirstWithFree(int32_t f, int32_t after) const {
  if (f < 0 || f > gpus_per_node_ || counts_[f] == 0) return -1;
  const uint64_t* b = &bits_[static_cast<size_t>(f) * words_];
  int32_t start = after + 1;
  for (int32_t w = start / 64; w < words_; ++w) {
    uint64_t word = b[w];
    if (w == start / 64 && start % 64 != 0) word &= ~uint64_t{0} << (start % 64);
    if (word != 0) return w * 64 + std::countr_zero(word);
  }
  return -1;
}

int32_t FreeMap::BestFit(int32_t n) const {
  for (int32_t f = n < 1 ? 1 : n; f <= gpus_per_node_; ++f) {
    if (counts_[f] > 0) return FirstWithFree(f);
  }
  return -1;
}

int32_t FreeMap::WorstFit() const {
  for (int32_t f = gpus_per_node_; f >= 1; --f) {
    if (counts_[f] > 0) return FirstWithFree(f);
  }
  return -1;
}

}  // namespace schedmate::policy
