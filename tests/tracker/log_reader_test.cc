#include "tracker/log_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "testing/test_util.h"

namespace schedmate::tracker {
namespace {

using schedmate::testing::TempDir;

std::string Clean(std::string_view raw, ReaderStats& stats, bool& binary, size_t cap = 65536) {
  std::string scratch;
  ReaderOptions o;
  o.max_line_bytes = cap;
  return std::string(SanitizeLine(raw, scratch, stats, o, binary));
}

TEST(SanitizeLineTest, StripsAnsiAndKeepsText) {
  ReaderStats st;
  bool binary = false;
  EXPECT_EQ(Clean("\x1b[32mINFO\x1b[0m step 5 \x1b]0;title\x07loss 1", st, binary),
            "INFO step 5 loss 1");
  EXPECT_FALSE(binary);
  EXPECT_EQ(st.ansi_sequences, 3u);
}

TEST(SanitizeLineTest, DropsInvalidUtf8AndCountsIt) {
  ReaderStats st;
  bool binary = false;
  EXPECT_EQ(Clean("caf\xe9"
                  " ok \xc3\xa9"
                  " done",
                  st, binary),
            "caf ok \xc3\xa9"
            " done");
  EXPECT_EQ(st.invalid_utf8_bytes, 1u);
  EXPECT_FALSE(binary);
}

TEST(SanitizeLineTest, BinaryLinesAreSkipped) {
  ReaderStats st;
  bool binary = false;
  std::string junk(
      "\x00\x01\x02\xff\xfe\x03\x04\x05\x06\x07"
      "ab",
      12);
  Clean(junk, st, binary);
  EXPECT_TRUE(binary);
  EXPECT_EQ(st.binary_lines_skipped, 1u);
}

TEST(SanitizeLineTest, LongLinesAreCapped) {
  ReaderStats st;
  bool binary = false;
  std::string line(5000, 'x');
  line += "\xc3\xa9";  // force the slow path
  EXPECT_EQ(Clean(line, st, binary, 1000).size(), 1000u);
  EXPECT_EQ(st.truncated_lines, 1u);
}

TEST(SplitSegmentsTest, CarriageReturnStates) {
  std::vector<std::string_view> segs;
  SplitSegments(" 10%|#  | 1/10 [00:01<00:09, 1.0it/s]\r 20%|## | 2/10 [00:02<00:08, 1.0it/s]\r",
                segs);
  ASSERT_EQ(segs.size(), 2u);
  EXPECT_NE(segs[1].find("2/10"), std::string_view::npos);
}

TEST(SplitSegmentsTest, GluedTqdmStatesAndTrailingText) {
  std::vector<std::string_view> segs;
  SplitSegments(
      "E 1:  10%|#| 1/10 [00:01<00:09,  1.01s/it]E 1:  20%|#| 2/10 [00:02<00:08,  1.01s/it]done!",
      segs);
  ASSERT_EQ(segs.size(), 3u);
  EXPECT_EQ(segs[2], "done!");
  // A bracket that is not tqdm stats does not split.
  SplitSegments("Epoch [1][50/500] lr: 0.1", segs);
  EXPECT_EQ(segs.size(), 1u);
}

TEST(MappedFileTest, MissingFileNamesThePath) {
  auto r = MappedFile::Open("/nonexistent/dir/train.log");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/dir/train.log"), std::string::npos);
  TempDir dir;
  auto d = MappedFile::Open(dir.path());
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("directory"), std::string::npos);
}

TEST(MappedFileTest, MapsContentAndCountsLines) {
  TempDir dir;
  std::ofstream(dir.File("a.log")) << "one\ntwo\nthree";
  auto f = MappedFile::Open(dir.File("a.log"));
  ASSERT_OK(f);
  EXPECT_EQ((*f)->data(), "one\ntwo\nthree");
  EXPECT_EQ(CountNewlines((*f)->data()), 2u);
  std::vector<std::string> lines;
  ForEachPhysicalLine((*f)->data(), [&](std::string_view l, uint64_t) { lines.emplace_back(l); });
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two", "three"}));
}

struct Seen {
  std::string text;
  int64_t line_no;
  bool complete;
};

class FollowerTest : public ::testing::Test {
 protected:
  void Append(const std::string& s) { std::ofstream(path_, std::ios::app) << s; }
  std::vector<Seen> Poll() {
    std::vector<Seen> out;
    EXPECT_OK(follower_.Poll([&](std::string_view t, int64_t n, uint64_t, bool c) {
      out.push_back({std::string(t), n, c});
    }));
    return out;
  }
  TempDir dir_;
  std::string path_ = dir_.File("train.log");
  FileFollower follower_{path_};
};

TEST_F(FollowerTest, WaitsForTheFileThenReadsAppends) {
  EXPECT_TRUE(Poll().empty());
  Append("step 1\nstep 2\n");
  auto s = Poll();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].text, "step 2");
  EXPECT_EQ(s[1].line_no, 2);
  Append("step 3\n");
  s = Poll();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].line_no, 3);
}

TEST_F(FollowerTest, ReportsCarriageReturnStatesOfAnUnfinishedLine) {
  Append("head\n 10%| 1/10\r 20%| 2/10\r 30%| 3/");
  auto s = Poll();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_FALSE(s[1].complete);
  EXPECT_EQ(s[1].line_no, 2);
  EXPECT_EQ(s[1].text, " 10%| 1/10\r 20%| 2/10\r");
  Append("10\n");
  s = Poll();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(s[0].complete);
  EXPECT_EQ(s[0].text, " 30%| 3/10");
}

TEST_F(FollowerTest, TruncationRestartsAtTheBeginning) {
  Append("step 1\nstep 2\nstep 3\n");
  Poll();
  { std::ofstream(path_, std::ios::trunc) << "new 1\n"; }
  auto s = Poll();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].text, "new 1");
  EXPECT_EQ(s[0].line_no, 1);
  EXPECT_EQ(follower_.truncations(), 1);
}

TEST_F(FollowerTest, RotationFollowsTheNewFile) {
  Append("old 1\n");
  Poll();
  ASSERT_EQ(std::rename(path_.c_str(), dir_.File("train.log.1").c_str()), 0);
  Append("fresh 1\nfresh 2\n");
  auto s = Poll();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].text, "fresh 1");
  EXPECT_EQ(s[0].line_no, 1);
  EXPECT_EQ(follower_.rotations(), 1);
}

TEST_F(FollowerTest, StartAtEndKeepsAbsoluteLineNumbers) {
  Append("a\nb\nc\n");
  FileFollower f(path_);
  f.SetStartAtEnd(true);
  std::vector<Seen> out;
  ASSERT_OK(f.Poll([&](std::string_view t, int64_t n, uint64_t, bool c) {
    out.push_back({std::string(t), n, c});
  }));
  EXPECT_TRUE(out.empty());
  Append("d\n");
  ASSERT_OK(f.Poll([&](std::string_view t, int64_t n, uint64_t, bool c) {
    out.push_back({std::string(t), n, c});
  }));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line_no, 4);
}

}  // namespace
}  // namespace schedmate::tracker
