// Lucid-compatible mode against the reference run of the unmodified Lucid artifact on the Venus
// September 2020 trace: per-VC and overall average JCT and queueing delay of fifo, sjf, srtf,
// qssf (EBM estimates) and tiresias must be within 0.5 % in every VC. Lucid writes its averages
// truncated to whole seconds, so ours are truncated the same way before comparing.

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "core/file_util.h"
#include "core/strings.h"
#include "policy/policy_registry.h"
#include "sim/metrics.h"
#include "sim/simulator.h"
#include "testing/test_util.h"
#include "trace/cluster_config.h"
#include "trace/estimates.h"
#include "trace/trace_reader.h"

namespace schedmate::sim {
namespace {

// reference_results/<file>: ",fifo_consolidate,..." then "<vc>,<int>,...". -> [policy][vc].
std::map<std::string, std::map<std::string, double>> ReadReference(const std::string& path) {
  std::map<std::string, std::map<std::string, double>> out;
  auto text = ReadFileToString(path);
  EXPECT_TRUE(text.ok()) << path;
  if (!text.ok()) return out;
  std::vector<std::string> cols;
  for (auto line : Split(*text, '\n')) {
    line = Trim(line);
    if (line.empty()) continue;
    auto f = Split(line, ',');
    if (cols.empty()) {
      for (auto c : f) cols.emplace_back(c.substr(0, c.find('_')));
      continue;
    }
    for (size_t i = 1; i < f.size() && i < cols.size(); ++i) {
      out[cols[i]][std::string(f[0])] = ParseDouble(f[i]).value_or(-1);
    }
  }
  return out;
}

TEST(LucidCompatTest, VenusMatchesReferenceInEveryVc) {
  SM_SKIP_WITHOUT_SHARED(dir, "traces/venus_sept2020_lucid");
  auto table = trace::ReadTrace(dir + "/venus_sept2020_jobs.csv");
  ASSERT_OK(table);
  auto cluster = trace::ReadVcConfig(dir + "/lucid_aux/vc_config.csv");
  ASSERT_OK(cluster);
  auto est = trace::ReadEstimates(dir + "/lucid_aux/Venus_Sept_ebm_weekly_updated.csv");
  ASSERT_OK(est);
  trace::ApplyEstimates(*table, *est);  // negatives -> 1000 s, Lucid's rule
  const auto jct_ref = ReadReference(dir + "/reference_results/jct_avg_consolidate.csv");
  const auto que_ref = ReadReference(dir + "/reference_results/que_avg_consolidate.csv");
  policy::PolicyRegistry registry;
  ASSERT_OK(policy::RegisterBuiltinPolicies(registry));

  for (const std::string name : {"fifo", "sjf", "srtf", "qssf", "tiresias"}) {
    SCOPED_TRACE(name);
    policy::PolicyConfig pc;
    pc.lucid_compat = true;
    SimOptions so;
    so.lucid_compat = true;
    auto result = Simulate(
        *table, *cluster,
        [&]() -> Result<std::unique_ptr<policy::SchedulingPolicy>> {
          return registry.Create(name, pc);
        },
        so);
    ASSERT_OK(result);
    const Summary s = Summarize(*result);
    EXPECT_EQ(s.counts.jobs, 23859);
    std::map<std::string, std::pair<double, double>> ours;
    for (const auto& v : s.per_vc) ours[v.name] = {v.avg_jct_s, v.avg_queue_s};
    ours["all"] = {s.avg_jct_s, s.avg_queue_s};
    ASSERT_EQ(jct_ref.at(name).size(), 16u);  // 15 VCs + all
    double worst = 0;
    for (const auto& [vc, ref_jct] : jct_ref.at(name)) {
      SCOPED_TRACE(vc);
      ASSERT_TRUE(ours.count(vc));
      const double ref_que = que_ref.at(name).at(vc);
      const double jct = std::trunc(ours[vc].first), que = std::trunc(ours[vc].second);
      const double e_jct = std::abs(jct - ref_jct) / ref_jct;
      const double e_que = std::abs(que - ref_que) / std::max(1.0, ref_que);
      EXPECT_LE(e_jct, 0.005) << "jct " << jct << " vs " << ref_jct;
      EXPECT_LE(e_que, 0.005) << "queue " << que << " vs " << ref_que;
      worst = std::max({worst, e_jct, e_que});
    }
    std::cout << "[lucid-compat] " << name << " max relative error " << worst << "\n";
  }
}

}  // namespace
}  // namespace schedmate::sim
