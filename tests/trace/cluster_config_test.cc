#include "trace/cluster_config.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"

namespace schedmate::trace {
namespace {

TEST(VcConfigTest, ReadsLucidVcConfig) {
  auto r = ReadVcConfig(testing::TestDataPath("trace/vc_config.csv"));
  ASSERT_OK(r);
  ASSERT_EQ(r->vcs.size(), 3u);
  EXPECT_EQ(r->vcs[0].name, "vcA");
  EXPECT_EQ(r->vcs[0].nodes, 3);
  EXPECT_EQ(r->vcs[0].gpus_per_node, 8);
  EXPECT_EQ(r->vcs[2].name, "vcC");
  EXPECT_EQ(r->total_gpus(), (3 + 2 + 10) * 8);
  auto four = ReadVcConfig(testing::TestDataPath("trace/vc_config.csv"), 4);
  ASSERT_OK(four);
  EXPECT_EQ(four->total_gpus(), 15 * 4);
}

TEST(VcConfigTest, ErrorsNameTheLine) {
  struct Case {
    const char* contents;
    const char* want;
  } cases[] = {
      {"", "v.csv:1: empty VC config"},
      {",num\nvcA,3\nvcB,x\n", "v.csv:3: VC vcB: 'x' is not a node count"},
      {",num\nvcA,-1\n", "v.csv:2: VC vcA"},
      {",num\nvcA,3\nvcA,4\n", "v.csv:3: duplicate VC vcA"},
      {",num\nvcA\n", "v.csv:2: expected 2 fields"},
      {",num\n,4\n", "v.csv:2: empty VC name"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.contents);
    auto r = ParseVcConfig(c.contents, "v.csv");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(c.want), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace schedmate::trace
