// The bundled demo trace under data/traces/ reads cleanly and fits its VC configuration.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "testing/test_util.h"
#include "trace/cluster_config.h"
#include "trace/trace_reader.h"

namespace schedmate::trace {
namespace {

std::string DataPath(const std::string& name) {
  return testing::SourceDir() + "/data/traces/" + name;
}

TEST(DemoDataTest, ChronusSliceAndVcConfigAgree) {
  auto t = ReadTrace(DataPath("philly_chronus_mix1_1h.csv"));
  ASSERT_OK(t);
  EXPECT_EQ(t->format, TraceFormat::kChronus);
  EXPECT_EQ(t->jobs.size(), 8'927u);
  EXPECT_EQ(t->rows_skipped, 0);
  auto spec = ReadVcConfig(DataPath("philly_chronus_mix1_1h_vc_config.csv"));
  ASSERT_OK(spec);
  EXPECT_EQ(spec->vcs.size(), 11u);
  EXPECT_EQ(spec->total_gpus(), 880);
  std::map<std::string, int64_t> vc_gpus;
  for (const auto& v : spec->vcs) vc_gpus[v.name] = int64_t{v.nodes} * v.gpus_per_node;
  for (const auto& j : t->jobs) {
    ASSERT_TRUE(vc_gpus.count(j.vc)) << j.vc;
    ASSERT_LE(j.gpus.ceil_whole(), vc_gpus[j.vc]) << j.id;  // every job fits its VC
    ASSERT_GT(j.duration, Duration::Zero()) << j.id;
    ASSERT_LT(j.submit, SimTime::FromSeconds(3600)) << j.id;
  }
}

}  // namespace
}  // namespace schedmate::trace
