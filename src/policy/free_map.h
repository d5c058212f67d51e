#pragma once
// FreeMap: free whole GPUs per node of one partition, indexed for placement. Nodes are bucketed
// by their free-GPU count in bitsets, so "lowest-index node with exactly f free GPUs" and
// "best-fit node for n GPUs" cost O(G * nodes / 64) and a copy is a few memcpys. Policies copy
// the backend's map to place tentatively; the backend keeps its own.
//
// Down nodes (failed) are in no bucket and report 0 free GPUs.
// Not thread-safe; a value type.

#include <cstdint>
#include <vector>

namespace schedmate::policy {

class FreeMap {
 public:
  FreeMap() = default;
  // `nodes` nodes of `gpus_per_node` GPUs, all up and free.
  FreeMap(int32_t nodes, int32_t gpus_per_node);

  int32_t nodes() const { return static_cast<int32_t>(free_.size()); }
  int32_t gpus_per_node() const { return gpus_per_node_; }
  // Free GPUs on `node` (0 when down).
  int32_t Free(int32_t node) const { return up_[node] ? free_[node] : 0; }
  bool IsUp(int32_t node) const { return up_[node] != 0; }
  int64_t total_free() const { return total_free_; }
  int64_t total_up_gpus() const { return total_up_gpus_; }
  int32_t up_nodes() const { return up_nodes_; }
  // Number of up nodes with exactly `f` free GPUs.
  int32_t CountWithFree(int32_t f) const { return counts_[f]; }

  // REQUIRES: node up, 0 < gpus <= Free(node).
  void Take(int32_t node, int32_t gpus);
  // REQUIRES: node up, Free(node) + gpus <= gpus_per_node.
  void Give(int32_t node, int32_t gpus);
  // Marks a node down / up. REQUIRES (SetDown): the node has no GPUs taken.
  void SetDown(int32_t node);
  void SetUp(int32_t node);

  // Lowest-index up node with exactly `f` free GPUs whose index is > `after`; -1 if none.
  int32_t FirstWithFree(int32_t f, int32_t after = -1) const;
  // Lowest-index node among those with the smallest free count >= n (best fit); -1 if none.
  int32_t BestFit(int32_t n) const;
  // Lowest-index node among those with the largest free count (worst fit); -1 if none free.
  int32_t WorstFit() const;

 private:
  void BucketSet(int32_t f, int32_t node, bool on);
  int32_t gpus_per_node_ = 0;
  int32_t words_ = 0;
  std::vector<int32_t> free_;
  std::vector<uint8_t> up_;
  std::vector<uint64_t> bits_;   // (gpus_per_node + 1) buckets of `words_` words
  std::vector<int32_t> counts_;  // per bucket
  int64_t total_free_ = 0;
  int64_t total_up_gpus_ = 0;
  int32_t up_nodes_ = 0;
};

}  // namespace schedmate::policy
