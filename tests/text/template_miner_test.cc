#include "text/template_miner.h"

#include <gtest/gtest.h>

namespace schedmate::text {
namespace {

TEST(TemplateMinerTest, MasksVariableTokens) {
  auto t =
      TemplateMiner::MaskTokens("loading /data/shard-0001/x.bin at 12:01:02 id deadbeef01 pal1");
  ASSERT_EQ(t.size(), 7u);
  EXPECT_EQ(t[1], "<*>");  // path
  EXPECT_EQ(t[3], "<*>");  // time
  EXPECT_EQ(t[5], "<*>");  // hex
  EXPECT_EQ(t[6], "pal#");
}

TEST(TemplateMinerTest, SimilarLinesShareAClusterAndGeneralise) {
  TemplateMiner m;
  int a = m.Add("Saving checkpoint to run-a after epoch 3");
  int b = m.Add("Saving checkpoint to run-b after epoch 4");
  int c = m.Add("Traceback (most recent call last):");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(m.TemplateText(a), "Saving checkpoint to <*> after epoch <*>");
  EXPECT_EQ(m.ClusterSize(a), 2u);
  EXPECT_EQ(m.ClusterCount(), 2u);
}

TEST(TemplateMinerTest, DeterministicIds) {
  TemplateMiner m1, m2;
  for (const char* l : {"a 1", "b 2 c", "a 3", "x y z"}) EXPECT_EQ(m1.Add(l), m2.Add(l));
}

}  // namespace
}  // namespace schedmate::text
