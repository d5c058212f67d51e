// `schedmate simulate` on real traces from ../shared (skipped when absent): the schedmate policy,
// with its default estimator (the advisor's online estimator when built, no future leak), must
// beat the Lucid-style policy on average JCT without a worse tail, on Helios Venus (where the
// policy was developed) and on the Helios GPW trace (not used while developing it).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "testing/test_util.h"

namespace schedmate::testing {
namespace {

nlohmann::json::const_reference Policy(const nlohmann::json& j, const std::string& name) {
  for (const auto& p : j["policies"]) {
    if (p["policy"] == name) return p;
  }
  ADD_FAILURE() << "no policy " << name;
  return j["policies"][0];
}

TEST(SchedmateCliTest, BeatsLucidOnVenus) {
  SM_SKIP_WITHOUT_SHARED(dir, "traces/venus_sept2020_lucid");
  // Lucid gets its paper's EBM estimates (--estimates: the file estimator); schedmate its own.
  auto r = RunSchedmate("simulate --trace " + ShellQuote(dir + "/venus_sept2020_jobs.csv") +
                        " --vc-config " + ShellQuote(dir + "/lucid_aux/vc_config.csv") +
                        " --estimates " +
                        ShellQuote(dir + "/lucid_aux/Venus_Sept_ebm_weekly_updated.csv") +
                        " --policy lucid,schedmate --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& lucid = Policy(j, "lucid");
  const auto& sm = Policy(j, "schedmate");
  EXPECT_EQ(lucid["estimator"], "file");
  EXPECT_NE(sm["estimator"], "oracle");
  EXPECT_EQ(sm["jobs"], 23859);
  EXPECT_LT(sm["avg_jct_s"].get<double>(), lucid["avg_jct_s"].get<double>());
  EXPECT_LT(sm["avg_queue_s"].get<double>(), lucid["avg_queue_s"].get<double>());
  EXPECT_LT(sm["p99_jct_s"].get<double>(), 1.05 * lucid["p99_jct_s"].get<double>());
  EXPECT_GT(sm["preemptions"].get<int64_t>(), 0);
}

TEST(SchedmateCliTest, BeatsLucidOnHeliosGpw) {
  SM_SKIP_WITHOUT_SHARED(trace, "traces/helios_gpw_15k/helios_data_training.csv");
  // 736 GPUs: the trace's mean GPU demand over its submission window, in whole 8-GPU nodes.
  auto r = RunSchedmate("simulate --trace " + ShellQuote(trace) +
                        " --gpus 736 --policy lucid,schedmate --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& lucid = Policy(j, "lucid");
  const auto& sm = Policy(j, "schedmate");
  EXPECT_EQ(sm["jobs"], lucid["jobs"]);
  EXPECT_LT(sm["avg_jct_s"].get<double>(), lucid["avg_jct_s"].get<double>());
  EXPECT_LT(sm["p99_jct_s"].get<double>(), 1.05 * lucid["p99_jct_s"].get<double>());
}

}  // namespace
}  // namespace schedmate::testing
