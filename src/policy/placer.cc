#include "policy/placer.h"

#include <algorithm>

namespace schedmate::policy {
namespace {

std::optional<Placement> Consolidate(int32_t gpus, FreeMap& free) {
  const int32_t g = free.gpus_per_node();
  Placement p;
  if (gpus <= g) {
    const int32_t node = free.BestFit(gpus);
    if (node < 0) return std::nullopt;
    p.nodes.push_back({node, gpus});
  } else {
    const int32_t whole = gpus / g;
    const int32_t rest = gpus % g;
    if (free.CountWithFree(g) < whole) return std::nullopt;
    int32_t node = -1;
    for (int32_t i = 0; i < whole; ++i) {
      node = free.FirstWithFree(g, node);
      p.nodes.push_back({node, g});
    }
    if (rest > 0) {
      // The node after the taken idle ones in "most free first" order.
      int32_t next = free.FirstWithFree(g, node);
      if (next < 0) {
        for (int32_t f = g - 1; f >= 1 && next < 0; --f) next = free.FirstWithFree(f);
      }
      if (next < 0 || free.Free(next) < rest) return std::nullopt;
      p.nodes.push_back({next, rest});
    }
  }
  for (const auto& s : p.nodes) free.Take(s.node, s.gpus);
  return p;
}

std::optional<Placement> Spread(int32_t gpus, FreeMap& free) {
  Placement p;
  int32_t left = gpus;
  while (left > 0) {
    const int32_t node = free.WorstFit();
    if (node < 0) break;
    const int32_t take = std::min(left, free.Free(node));
    free.Take(node, take);
    p.nodes.push_back({node, take});
    left -= take;
  }
  if (left > 0) {
    Release(p, free);
    return std::nullopt;
  }
  std::sort(p.nodes.begin(), p.nodes.end(),
            [](const NodeShare& a, const NodeShare& b) { return a.node < b.node; });
  return p;
}

}  // namespace

std::string_view PlacementKindName(PlacementKind kind) {
  return kind == PlacementKind::kSpread ? "spread" : "consolidate";
}

std::optional<PlacementKind> ParsePlacementKind(std::string_view name) {
  if (name == "consolidate") return PlacementKind::kConsolidate;
  if (name == "spread") return PlacementKind::kSpread;
  return std::nullopt;
}

std::optional<Placement> Place(PlacementKind kind, int32_t gpus, FreeMap& free) {
  if (gpus <= 0 || free.total_free() < gpus) return std::nullopt;
  return kind == PlacementKind::kSpread ? Spread(gpus, free) : Consolidate(gpus, free);
}

void Release(const Placement& placement, FreeMap& free) {
  if (placement.share_with != kNoJob) return;
  for (const auto& s : placement.nodes) free.Give(s.node, s.gpus);
}

}  // namespace schedmate::policy
