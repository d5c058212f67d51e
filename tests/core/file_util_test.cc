#include "core/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <set>
#include <sstream>
#include <vector>

#include "core/guarded_mapping.h"
#include "testing/test_util.h"

namespace schedmate {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

mode_t CurrentUmask() {
  const mode_t m = ::umask(0);
  ::umask(m);
  return m;
}

// Names in `dir` other than `keep`: leftovers of a write.
std::vector<std::string> OtherEntries(const std::string& dir, const std::set<std::string>& keep) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (!keep.count(name)) out.push_back(name);
  }
  return out;
}

// Defect 4: the old writer opened the predictable "<path>.tmp" and followed a symlink planted
// there, so whoever ran it (root) overwrote the symlink's target.
TEST(WriteStringToFileTest, SymlinkPlantedAtTheOldTempNameIsNotFollowed) {
  testing::TempDir tmp;
  const std::string victim = tmp.File("victim");
  std::ofstream(victim) << "precious";
  const std::string out = tmp.File("report.json");
  ASSERT_EQ(::symlink(victim.c_str(), (out + ".tmp").c_str()), 0);
  ASSERT_OK(WriteStringToFile(out, "{\"ok\": true}\n"));
  EXPECT_EQ(Slurp(victim), "precious");
  EXPECT_EQ(Slurp(out), "{\"ok\": true}\n");
  struct stat lst {};
  ASSERT_EQ(::lstat(out.c_str(), &lst), 0);
  EXPECT_TRUE(S_ISREG(lst.st_mode));
  // Nothing left behind but the planted link.
  EXPECT_EQ(OtherEntries(tmp.path(), {"victim", "report.json", "report.json.tmp"}),
            std::vector<std::string>{});
}

// A symlink as the output path inside a world-writable sticky directory (/tmp) may have been
// planted by anyone: refused, nothing written anywhere.
TEST(WriteStringToFileTest, RefusesASymlinkInAWorldWritableDirectory) {
  testing::TempDir tmp;
  const std::string shared = tmp.File("shared");
  ASSERT_EQ(::mkdir(shared.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
  const std::string victim = tmp.File("victim");
  std::ofstream(victim) << "precious";
  const std::string out = shared + "/out.json";
  ASSERT_EQ(::symlink(victim.c_str(), out.c_str()), 0);
  Status st = WriteStringToFile(out, "attack");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find(out), std::string::npos);
  EXPECT_EQ(Slurp(victim), "precious");
  struct stat lst {};
  ASSERT_EQ(::lstat(out.c_str(), &lst), 0);
  EXPECT_TRUE(S_ISLNK(lst.st_mode));  // the link is left alone too
  // The same through a symlinked directory in the shared one.
  const std::string victim_dir = tmp.File("victim_dir");
  ASSERT_EQ(::mkdir(victim_dir.c_str(), 0755), 0);
  ASSERT_EQ(::symlink(victim_dir.c_str(), (shared + "/d").c_str()), 0);
  EXPECT_EQ(WriteStringToFile(shared + "/d/x.json", "attack").code(),
            StatusCode::kFailedPrecondition);
  EXPECT_FALSE(fs::exists(victim_dir + "/x.json"));
  // A plain file in the shared directory is fine.
  ASSERT_OK(WriteStringToFile(shared + "/plain.json", "ok"));
  EXPECT_EQ(Slurp(shared + "/plain.json"), "ok");
}

// Outside world-writable directories a symlink is written through: the target is replaced, the
// link stays (dotfiles kept in a repository).
TEST(WriteStringToFileTest, WritesThroughASymlinkInAPrivateDirectory) {
  testing::TempDir tmp;
  const std::string real = tmp.File("real.yaml");
  std::ofstream(real) << "old";
  const std::string link = tmp.File("link.yaml");
  ASSERT_EQ(::symlink("real.yaml", link.c_str()), 0);
  ASSERT_OK(WriteStringToFile(link, "new"));
  EXPECT_EQ(Slurp(real), "new");
  struct stat lst {};
  ASSERT_EQ(::lstat(link.c_str(), &lst), 0);
  EXPECT_TRUE(S_ISLNK(lst.st_mode));
}

TEST(WriteStringToFileTest, KeepsAnExistingFilesModeAndGivesNewFilesTheUmaskMode) {
  testing::TempDir tmp;
  const std::string existing = tmp.File("secret.json");
  std::ofstream(existing) << "old";
  ASSERT_EQ(::chmod(existing.c_str(), 0640), 0);
  ASSERT_OK(WriteStringToFile(existing, "new"));
  EXPECT_EQ(Slurp(existing), "new");
  EXPECT_EQ(ModeOf(existing), 0640u);
  ASSERT_EQ(::chmod(existing.c_str(), 0600), 0);
  ASSERT_OK(WriteStringToFile(existing, "newer"));
  EXPECT_EQ(ModeOf(existing), 0600u);
  const std::string fresh = tmp.File("fresh.json");
  ASSERT_OK(WriteStringToFile(fresh, "x"));
  EXPECT_EQ(ModeOf(fresh), 0666u & ~CurrentUmask());
}

TEST(WriteStringToFileTest, WritesIntoDevicesAndRefusesDirectories) {
  ASSERT_OK(WriteStringToFile("/dev/null", "discarded"));
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  testing::TempDir tmp;
  EXPECT_EQ(WriteStringToFile(tmp.path(), "x").code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(WriteStringToFile(tmp.File("no/such/dir/x"), "x").ok());
}

// /dev/stdout or /dev/fd/N open on a regular file (a shell redirection): the bytes go to the
// open descriptor, the file the shell opened; the old writer renamed a temp file over the path,
// which as root replaced /dev/stdout itself with a regular file. (/dev/fd/N here: on the old code
// this fails without touching /dev.)
TEST(WriteStringToFileTest, DescriptorPathWritesIntoTheOpenFile) {
  testing::TempDir tmp;
  const std::string got = tmp.File("got");
  const int fd = ::open(got.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  const Status st = WriteStringToFile("/dev/fd/" + std::to_string(fd), "to the descriptor");
  ::close(fd);
  ASSERT_OK(st);
  EXPECT_EQ(Slurp(got), "to the descriptor");
}

TEST(WriteTempFileTest, UniqueNamesPrivateMode) {
  testing::TempDir tmp;
  auto a = WriteTempFile(tmp.path(), "plot", ".svg", "<svg/>");
  auto b = WriteTempFile(tmp.path(), "plot", ".svg", "<svg/>");
  ASSERT_OK(a);
  ASSERT_OK(b);
  EXPECT_NE(*a, *b);
  EXPECT_EQ(Slurp(*a), "<svg/>");
  EXPECT_EQ(ModeOf(*a), 0600u);
  EXPECT_EQ(fs::path(*a).extension(), ".svg");
}

TEST(ReadFileToStringTest, RefusesDevicesSocketsAndDirectories) {
  auto z = ReadFileToString("/dev/zero");
  ASSERT_FALSE(z.ok());
  EXPECT_EQ(z.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(z.status().message().find("/dev/zero"), std::string::npos);
  testing::TempDir tmp;
  EXPECT_EQ(ReadFileToString(tmp.path()).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadFileToString(tmp.File("missing")).status().code(), StatusCode::kNotFound);
}

// Defect 7: a 2 GB sparse file was read into 2.1 GB of heap before anything said "binary". The
// size is checked first; a text read sniffs a bounded prefix before reading the rest.
TEST(ReadFileToStringTest, HugeSparseFileIsRefusedBeforeReading) {
  testing::TempDir tmp;
  const std::string sparse = tmp.File("sparse.csv");
  { std::ofstream(sparse) << ""; }
  ASSERT_EQ(::truncate(sparse.c_str(), off_t{2} << 30), 0);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = ReadFileToString(sparse);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find(sparse), std::string::npos);
  // Under a cap that admits it, a text read still refuses it from its first 64 KiB.
  auto t = ReadTextFileToString(sparse, size_t{4} << 30);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("binary"), std::string::npos);
  // Reading 2 GB of zeros takes seconds; both refusals together take milliseconds.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
}

TEST(ReadFileToStringTest, TextReadsAndPrefixes) {
  testing::TempDir tmp;
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "job_" + std::to_string(i) + ",4,3600,é\n";  // > 64 KiB
  std::ofstream(tmp.File("t.csv")) << text;
  auto whole = ReadTextFileToString(tmp.File("t.csv"));
  ASSERT_OK(whole);
  EXPECT_EQ(*whole, text);
  EXPECT_EQ(ReadTextFileToString(tmp.File("t.csv"), 1000).status().code(),
            StatusCode::kResourceExhausted);
  auto prefix = ReadFilePrefix(tmp.File("t.csv"), 10);
  ASSERT_OK(prefix);
  EXPECT_EQ(*prefix, text.substr(0, 10));
  EXPECT_EQ(ReadTextFileToString("/bin/sh").status().code(), StatusCode::kInvalidArgument);
}

TEST(LooksBinaryTest, TextVersusBinary) {
  EXPECT_FALSE(LooksBinary(""));
  EXPECT_FALSE(LooksBinary("plain text\twith tabs\r\n\x1b[31mcolour\x1b[0m\n"));
  EXPECT_FALSE(LooksBinary("ünïcödé ✓ 中文\n"));
  EXPECT_FALSE(LooksBinary("cut at the end \xe2\x9c"));  // an incomplete last character
  EXPECT_TRUE(LooksBinary(std::string("ELF\0\1\2", 6)));
  EXPECT_TRUE(LooksBinary("\xff\xfe\xfd\xfc\x80\x81\x82 abc"));
}

// A FIFO without a writer must not hang the reader (the old fopen blocked forever), and a FIFO
// with a writer is read like a pipe.
TEST(ReadFileToStringTest, FifoWithoutWriterDoesNotHang) {
  testing::TempDir tmp;
  const std::string fifo = tmp.File("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto pending = std::async(std::launch::async, [&] { return ReadFileToString(fifo); });
  if (pending.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    // Unblock the stuck reader so the test can end, then fail.
    const int w = ::open(fifo.c_str(), O_WRONLY);
    if (w >= 0) ::close(w);
    FAIL() << "reading a FIFO without a writer hung";
  }
  auto r = pending.get();
  ASSERT_OK(r);
  EXPECT_EQ(*r, "");
}

TEST(FileIdentityTest, DetectsTruncationAndRewriteButNotAppends) {
  testing::TempDir tmp;
  const std::string path = tmp.File("x.log");
  std::ofstream(path) << "header line\nstep 1\n";
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  auto id = CaptureFileIdentity(fd, 19);
  ASSERT_OK(id);
  std::ofstream(path, std::ios::app) << "step 2\n";
  EXPECT_OK(CheckFileUnchanged(fd, *id, path));
  ASSERT_EQ(::truncate(path.c_str(), 5), 0);
  EXPECT_EQ(CheckFileUnchanged(fd, *id, path).code(), StatusCode::kDataLoss);
  std::ofstream(path, std::ios::trunc) << "another run!\nstep 1\nstep 2\n";
  EXPECT_EQ(CheckFileUnchanged(fd, *id, path).code(), StatusCode::kDataLoss);
  ::close(fd);
}

// Defect 2 at the mapping level: reading a mapped page after another process truncated the file
// raised SIGBUS. A guarded mapping reads zeros there and reports the cut.
TEST(GuardedMappingTest, TruncatedWhileMappedReadsZerosAndReportsIt) {
  testing::TempDir tmp;
  const std::string path = tmp.File("train.log");
  std::string text;
  while (text.size() < (4u << 20)) text += "step 1234 loss 0.5 lr 1e-4\n";
  std::ofstream(path) << text;
  auto m = GuardedMapping::Open(path);
  ASSERT_OK(m);
  ASSERT_EQ((*m)->data().size(), text.size());
  EXPECT_OK((*m)->CheckIntact());
  // A real truncation by another process.
  ASSERT_EQ(std::system(("truncate -s 0 " + testing::ShellQuote(path)).c_str()), 0);
  size_t newlines = 0;
  for (char c : (*m)->data()) newlines += c == '\n';  // touches every page: SIGBUS before
  EXPECT_EQ(newlines, 0u);
  Status st = (*m)->CheckIntact();
  EXPECT_EQ(st.code(), StatusCode::kDataLoss);
  EXPECT_NE(st.message().find(path), std::string::npos);
  // Another mapping of the new content is intact.
  std::ofstream(path) << "fresh\n";
  auto again = GuardedMapping::Open(path);
  ASSERT_OK(again);
  EXPECT_EQ((*again)->data(), "fresh\n");
  EXPECT_OK((*again)->CheckIntact());
}

// The handler only repairs its own mappings: any other SIGBUS still kills the process.
TEST(GuardedMappingDeathTest, ForeignSigbusStillKills) {
  testing::TempDir tmp;
  std::ofstream(tmp.File("a")) << "abc";
  auto m = GuardedMapping::Open(tmp.File("a"));  // installs the handler
  ASSERT_OK(m);
  // Not swallowed: the process dies (by SIGBUS itself, or through a sanitizer's own handler,
  // which the mapping chains to, reporting it and aborting).
  EXPECT_EXIT(
      ::raise(SIGBUS),
      [](int status) {
        return WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0);
      },
      "");
}

TEST(GuardedMappingTest, RefusesNonRegularFiles) {
  EXPECT_EQ(GuardedMapping::Open("/dev/zero").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(GuardedMapping::Open("/nonexistent/x").status().code(), StatusCode::kNotFound);
  testing::TempDir tmp;
  std::ofstream(tmp.File("empty")) << "";
  auto e = GuardedMapping::Open(tmp.File("empty"));
  ASSERT_OK(e);
  EXPECT_TRUE((*e)->data().empty());
  EXPECT_OK((*e)->CheckIntact());
}

}  // namespace
}  // namespace schedmate
