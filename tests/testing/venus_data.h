#pragma once
// The Helios Venus trace as Lucid's artifact runs it (../shared/traces/venus_sept2020_lucid: jobs,
// VC config, the EBM estimates applied, the co-location profiles), loaded once per process for
// benchmarks and tests. `ok` is false when the shared data is absent or unreadable.

#include <string>

#include "core/job.h"
#include "policy/colocation_model.h"
#include "testing/test_util.h"
#include "trace/cluster_config.h"
#include "trace/estimates.h"
#include "trace/trace_reader.h"

namespace schedmate::testing {

struct VenusData {
  JobTable table;
  ClusterSpec cluster;
  policy::ColocationModel model;
  bool ok = false;
};

inline const VenusData& SharedVenus() {
  static const VenusData v = [] {
    VenusData out;
    auto dir = SharedPath("traces/venus_sept2020_lucid");
    if (!dir) return out;
    auto t = trace::ReadTrace(*dir + "/venus_sept2020_jobs.csv");
    auto c = trace::ReadVcConfig(*dir + "/lucid_aux/vc_config.csv");
    auto e = trace::ReadEstimates(*dir + "/lucid_aux/Venus_Sept_ebm_weekly_updated.csv");
    auto m = policy::ColocationModel::Load(*dir + "/lucid_aux/colocate_info.csv",
                                           *dir + "/lucid_aux/single_data.csv");
    if (!t.ok() || !c.ok() || !e.ok() || !m.ok()) return out;
    out.table = std::move(t).value();
    trace::ApplyEstimates(out.table, *e);
    out.cluster = std::move(c).value();
    out.model = std::move(m).value();
    out.ok = true;
    return out;
  }();
  return v;
}

}  // namespace schedmate::testing
