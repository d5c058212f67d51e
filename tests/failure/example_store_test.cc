#include "failure/example_store.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/file_util.h"
#include "failure/diagnosis_json.h"
#include "testing/test_util.h"

namespace schedmate::failure {
namespace {

TEST(ExampleStoreTest, ExampleJsonNamesTheLabel) {
  const nlohmann::json j = ExampleToJson(
      FailureExample{FailureLabel::kInfrastructure, "ecc", "xid <num> uncorrectable"});
  EXPECT_EQ(j["label"], "infrastructure");
  EXPECT_EQ(j["category"], "ecc");
  EXPECT_EQ(j["text"], "xid <num> uncorrectable");
  EXPECT_EQ(j.size(), 3u);
}

TEST(ExampleStoreTest, MaskDropsValuesPathsAndIds) {
  EXPECT_EQ(MaskLogLine("OSError: [Errno 28] No space left on device: '/scratch/u1/ckpt-300.pt'"),
            "oserror errno no space left on device");
  EXPECT_EQ(MaskLogLine("node 0x7f3a9c001234 deadbeefcafe failed at 10.0.0.3:29500"),
            "node failed at");
  EXPECT_EQ(MaskLogLine(""), "");
}

TEST(ExampleStoreTest, AppendLoadAndVote) {
  testing::TempDir dir;
  std::string path = dir.File("sub/examples.jsonl");
  ASSERT_OK(ExampleStore::Append(
      path, {FailureLabel::kInfrastructure, "storage", MaskLogLine("lustre ost 12 unavailable")}));
  ASSERT_OK(ExampleStore::Append(
      path, {FailureLabel::kApplication, "data_error", MaskLogLine("bad shard header in record")}));
  ExampleStore store;
  ASSERT_OK(store.Load(path));
  ASSERT_EQ(store.size(), 2u);
  auto vote = store.Vote(MaskLogLine("lustre ost 7 unavailable"), 3, 0.5);
  ASSERT_TRUE(vote);
  EXPECT_EQ(vote->label, FailureLabel::kInfrastructure);
  EXPECT_EQ(vote->category, "storage");
  EXPECT_GT(vote->similarity, 0.9);
  EXPECT_FALSE(store.Vote(MaskLogLine("completely different words here"), 3, 0.5));

  ExampleStore from_dir;  // a directory of *.jsonl files
  ASSERT_OK(from_dir.Load(std::filesystem::path(path).parent_path().string()));
  EXPECT_EQ(from_dir.size(), 2u);
}

TEST(ExampleStoreTest, BadLinesNameFileAndLine) {
  testing::TempDir dir;
  ASSERT_OK(WriteStringToFile(dir.File("e.jsonl"),
                              "{\"label\":\"application\",\"text\":\"x y\"}\n\n{\"label\":\"hw\","
                              "\"text\":\"a b\"}\n"));
  ExampleStore store;
  Status st = store.Load(dir.File("e.jsonl"));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("e.jsonl:3:"), std::string::npos) << st.message();
  ASSERT_OK(WriteStringToFile(dir.File("f.jsonl"), "not json\n"));
  EXPECT_NE(store.Load(dir.File("f.jsonl")).message().find("f.jsonl:1: not a JSON object"),
            std::string::npos);
  EXPECT_EQ(store.Load(dir.File("none.jsonl")).code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace schedmate::failure
