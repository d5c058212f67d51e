#pragma once
// Placers: choose nodes for a job's GPUs on a (tentative) FreeMap and reserve them there.
//
// kConsolidate is Lucid's consolidate placement, generalised from 8 to G GPUs per node:
//  - n <= G: best fit: among nodes with the smallest free count >= n, the lowest index;
//  - n a multiple of G: n/G idle nodes, lowest indices first;
//  - otherwise: n/G idle nodes (lowest indices), plus n%G GPUs on the node that comes next in
//    "most free first, then lowest index" order (the next idle node if any is left); fails if
//    that node has fewer than n%G free GPUs, even when another node could take them.
//    (That last rule is Lucid's, kept so that Lucid-compatible runs match it.)
// kSpread spreads load: n <= G goes to the node with the most free GPUs (worst fit, lowest
// index on ties); larger jobs take GPUs from the most-free nodes downwards.
// Both fail (nullopt, map untouched) when the partition has fewer than n free GPUs.

#include <cstdint>
#include <optional>
#include <string_view>

#include "policy/free_map.h"
#include "policy/scheduling_policy.h"

namespace schedmate::policy {

enum class PlacementKind : uint8_t { kConsolidate, kSpread };
std::string_view PlacementKindName(PlacementKind kind);  // "consolidate" | "spread"
std::optional<PlacementKind> ParsePlacementKind(std::string_view name);

// Reserves `gpus` whole GPUs on `free` and returns where; nullopt (and `free` unchanged) when
// they do not fit. REQUIRES: gpus > 0.
std::optional<Placement> Place(PlacementKind kind, int32_t gpus, FreeMap& free);

// Returns a placement's GPUs to `free` (a co-located placement holds no GPUs of its own).
void Release(const Placement& placement, FreeMap& free);

}  // namespace schedmate::policy
