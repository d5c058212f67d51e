#include "tracker/log_reader.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
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

TEST(LogFileTest, MissingFileNamesThePath) {
  auto r = LogFile::Open("/nonexistent/dir/train.log");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/dir/train.log"), std::string::npos);
  TempDir dir;
  auto d = LogFile::Open(dir.path());
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("directory"), std::string::npos);
}

TEST(LogFileTest, ReadsContentAndLinesInChunks) {
  TempDir dir;
  std::ofstream(dir.File("a.log")) << "one\ntwo\n\nthree";
  auto f = LogFile::Open(dir.File("a.log"));
  ASSERT_OK(f);
  EXPECT_EQ((*f)->size(), 14u);
  auto all = (*f)->Read(0, 100);
  ASSERT_OK(all);
  EXPECT_EQ(*all, "one\ntwo\n\nthree");
  std::vector<std::pair<std::string, uint64_t>> lines;
  ASSERT_OK(ForEachLineInFile(**f, 0, (*f)->size(), [&](std::string_view l, uint64_t off) {
    lines.emplace_back(std::string(l), off);
  }));
  EXPECT_EQ(lines, (std::vector<std::pair<std::string, uint64_t>>{
                       {"one", 0}, {"two", 4}, {"", 8}, {"three", 9}}));
  auto nl = CountNewlinesInFile(**f, 0, (*f)->size());
  ASSERT_OK(nl);
  EXPECT_EQ(*nl, 3u);
  auto next = NextLineStartInFile(**f, 5);
  ASSERT_OK(next);
  EXPECT_EQ(*next, 8u);
}

// Lines that span read chunks (1 MiB) keep their text and offsets, and a line longer than
// kMaxPhysicalLineBytes is reported once, by its head, with the following lines still in place.
TEST(LogFileTest, LinesAcrossChunksAndOverlongLines) {
  TempDir dir;
  std::string text;
  std::vector<std::pair<std::string, uint64_t>> want;
  auto add = [&](const std::string& line) {
    want.emplace_back(line.substr(0, kMaxPhysicalLineBytes), text.size());
    text += line + "\n";
  };
  for (int i = 0; i < 40000; ++i) add("step " + std::to_string(i) + " loss 1.0");
  add(std::string(kMaxPhysicalLineBytes + (3u << 20), 'x'));
  add("after the long line");
  {
    std::ofstream out(dir.File("big.log"), std::ios::binary);
    out << text;
  }
  auto f = LogFile::Open(dir.File("big.log"));
  ASSERT_OK(f);
  std::vector<std::pair<std::string, uint64_t>> got;
  ASSERT_OK(ForEachLineInFile(**f, 0, (*f)->size(), [&](std::string_view l, uint64_t off) {
    got.emplace_back(std::string(l), off);
  }));
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(got[i].second, want[i].second);
    EXPECT_EQ(got[i].first.size(), want[i].first.size());
    EXPECT_TRUE(got[i].first == want[i].first);
  }
}

// Devices and FIFOs are refused at once: /dev/zero never ends, and a FIFO would block the open.
TEST(LogFileTest, RefusesDevicesAndFifos) {
  auto z = LogFile::Open("/dev/zero");
  ASSERT_FALSE(z.ok());
  EXPECT_EQ(z.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(z.status().message().find("/dev/zero"), std::string::npos);
  TempDir dir;
  ASSERT_EQ(::mkfifo(dir.File("fifo").c_str(), 0600), 0);
  auto p = LogFile::Open(dir.File("fifo"));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
}

// A file that shrinks after it was opened is a kDataLoss error naming the file, not a crash
// (with mmap this read was SIGBUS).
TEST(LogFileTest, TruncationWhileReadingIsAnError) {
  TempDir dir;
  const std::string path = dir.File("rot.log");
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 200000; ++i) out << "step " << i << " loss 0.5\n";
  }
  auto f = LogFile::Open(path);
  ASSERT_OK(f);
  ASSERT_OK((*f)->CheckUnchanged());
  ASSERT_EQ(::truncate(path.c_str(), 100), 0);
  size_t lines = 0;
  Status st = ForEachLineInFile(**f, 0, (*f)->size(), [&](std::string_view, uint64_t) { ++lines; });
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kDataLoss);
  EXPECT_NE(st.message().find(path), std::string::npos);
  EXPECT_EQ((*f)->CheckUnchanged().code(), StatusCode::kDataLoss);
}

// Truncated and rewritten to a larger size (copytruncate, then new output): the size alone does
// not show it; the changed first bytes do.
TEST(LogFileTest, RewriteWhileReadingIsDetected) {
  TempDir dir;
  const std::string path = dir.File("rot.log");
  std::ofstream(path) << "2024-01-01 first run\nstep 1\n";
  auto f = LogFile::Open(path);
  ASSERT_OK(f);
  std::ofstream(path, std::ios::trunc) << "2024-02-02 second run\nstep 1\nstep 2\nstep 3\n";
  EXPECT_EQ((*f)->CheckUnchanged().code(), StatusCode::kDataLoss);
  // Appends alone are fine.
  auto g = LogFile::Open(path);
  ASSERT_OK(g);
  std::ofstream(path, std::ios::app) << "step 4\n";
  EXPECT_OK((*g)->CheckUnchanged());
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
