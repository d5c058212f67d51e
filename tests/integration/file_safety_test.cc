// CLI-level tests of reading files safely, through the built binary with real processes, real
// truncation and real signals (issue 17, defects 2 and 7):
//  * a truncation loop: another process truncates and rewrites a multi-MB training log 100 times
//    while `logs metrics` (default, --full-scan, --all) and `diagnose` read it again and again;
//    no run may crash (the mmap readers died of SIGBUS, exit 135, in 16 of 18 runs);
//  * `trace stats` on /dev/zero ends at once with exit 1, and on a 2 GB sparse file it ends with
//    exit 1 without reading it into memory (peak RSS measured with wait4).

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "testing/test_util.h"

extern char** environ;

namespace schedmate {
namespace {

using testing::RunShell;
using testing::SchedmateBinary;
using testing::ShellQuote;
using testing::TempDir;

// A realistic multi-MB log of a distributed training job: timestamps, rank prefixes, tqdm bars,
// per-step metrics, evaluation blocks, warnings, and an infrastructure failure at the end.
std::string TrainingLog(size_t min_bytes) {
  std::string out;
  out.reserve(min_bytes + 4096);
  out += "2024-05-01 12:00:00,001 - INFO - torch.distributed: world_size=16 backend=nccl\n";
  int step = 0;
  int epoch = 1;
  char line[512];
  while (out.size() < min_bytes) {
    ++step;
    const int sec = step * 3 / 4;
    std::snprintf(line, sizeof(line),
                  "2024-05-01 %02d:%02d:%02d,%03d - INFO - [rank0]: Epoch %d/20 | step %d/400000 | "
                  "loss %.4f | lr %.2e | grad_norm %.3f | 0.%03d s/it | %d tok/s\n",
                  12 + sec / 3600 % 12, sec / 60 % 60, sec % 60, step % 1000, epoch, step,
                  2.5 - 1.5 * step / 400000.0, 3e-4, 0.4 + (step % 17) / 100.0, 500 + step % 37,
                  41000 + step % 900);
    out += line;
    if (step % 50 == 0) {
      std::snprintf(line, sizeof(line),
                    "Training: %3d%%|#####     | %d/400000 [%02d:%02d<11:20:00,  1.92it/s]\r"
                    "Training: %3d%%|#####     | %d/400000 [%02d:%02d<11:19:59,  1.93it/s]\n",
                    step * 100 / 400000, step, sec / 60 % 60, sec % 60, step * 100 / 400000,
                    step + 1, sec / 60 % 60, sec % 60);
      out += line;
    }
    if (step % 1000 == 0) {
      out += "[rank3]: UserWarning: torch.utils.checkpoint: please pass in use_reentrant=False\n";
      std::snprintf(line, sizeof(line),
                    "***** eval at step %d *****\n  eval_loss = %.4f\n  eval_accuracy = 0.%04d\n",
                    step, 2.1 - step / 500000.0, 6000 + step % 3000);
      out += line;
    }
    if (step % 20000 == 0) ++epoch;
  }
  out += "[rank3]: RuntimeError: CUDA error: uncorrectable ECC error encountered\n";
  out += "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 3\n";
  return out;
}

// Forks a process that truncates `path` and writes `content` into it again, `rounds` times, in
// 1 MiB pieces with a short pause between them (a log being written, not one instant copy).
pid_t StartTruncatingWriter(const std::string& path, const std::string& content, int rounds) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  // Child: async-signal-safe calls only.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) ::_exit(3);
  constexpr size_t kPiece = size_t{1} << 20;
  const struct timespec pause = {0, 2'000'000};  // 2 ms
  for (int round = 0; round < rounds; ++round) {
    if (::ftruncate(fd, 0) != 0) ::_exit(4);  // logrotate copytruncate's truncation
    for (size_t off = 0; off < content.size(); off += kPiece) {
      const size_t n = std::min(kPiece, content.size() - off);
      if (::pwrite(fd, content.data() + off, n, static_cast<off_t>(off)) !=
          static_cast<ssize_t>(n)) {
        ::_exit(5);
      }
      ::nanosleep(&pause, nullptr);
    }
  }
  ::close(fd);
  ::_exit(0);
}

// The done-when test of defect 2.
TEST(FileSafetyTest, TruncationLoopEndsWithoutACrash) {
  TempDir dir;
  const std::string log = dir.File("train.log");
  const std::string content = TrainingLog(size_t{12} << 20);  // over the 8 MiB reverse-scan mark
  {
    std::ofstream out(log, std::ios::binary);
    out << content;
  }
  const std::string bin = ShellQuote(SchedmateBinary());
  const std::string q = ShellQuote(log);
  const std::vector<std::pair<std::string, std::string>> commands = {
      {"logs metrics", "logs metrics " + q + " --json"},
      {"logs metrics --full-scan", "logs metrics " + q + " --json --full-scan"},
      {"logs metrics --all", "logs metrics " + q + " --json --all"},
      {"diagnose", "diagnose " + q + " --json --no-examples"},
  };
  const auto start = std::chrono::steady_clock::now();
  const pid_t writer = StartTruncatingWriter(log, content, 100);
  ASSERT_GT(writer, 0);
  std::map<int, int> exit_codes;
  std::map<std::string, int> crashes;
  int runs = 0;
  int writer_status = 0;
  bool writer_done = false;
  // Read again and again while the writer runs (and at least once per command); 45 s at most.
  while ((!writer_done || runs < static_cast<int>(commands.size())) &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(45)) {
    const auto& [name, args] = commands[static_cast<size_t>(runs) % commands.size()];
    auto r = RunShell("SCHEDMATE_NO_PROGRESS=1 SCHEDMATE_CACHE_DIR=" + ShellQuote(dir.path()) +
                      " timeout -k 5 30 " + bin + " " + args + " > /dev/null");
    ++runs;
    ++exit_codes[r.exit_code];
    if (r.exit_code != 0 && r.exit_code != 1) {
      ++crashes[name];
      ADD_FAILURE() << name << " exited with " << r.exit_code << ": " << r.err;
    } else if (r.exit_code == 1) {
      // A run that gives up says why, naming the log.
      EXPECT_NE(r.err.find(log), std::string::npos) << name << ": " << r.err;
    }
    if (!writer_done && ::waitpid(writer, &writer_status, WNOHANG) == writer) writer_done = true;
  }
  if (!writer_done) {
    ::kill(writer, SIGKILL);
    ::waitpid(writer, &writer_status, 0);
    ADD_FAILURE() << "the writer did not finish its 100 rewrites in time";
  }
  EXPECT_TRUE(WIFEXITED(writer_status) && WEXITSTATUS(writer_status) == 0);
  EXPECT_TRUE(crashes.empty());
  EXPECT_GE(runs, 8) << "too few reads overlapped the rewrites to test anything";
  std::string summary;
  for (const auto& [code, n] : exit_codes) {
    summary += " exit " + std::to_string(code) + ": " + std::to_string(n);
  }
  RecordProperty("runs", runs);
  std::printf("truncation loop: %d runs,%s\n", runs, summary.c_str());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
}

struct SpawnResult {
  int exit_code = -1;
  long max_rss_kb = 0;
  std::string err;
  double seconds = 0;
};

// Runs the binary with `args` (no shell), stdout to /dev/null, stderr to a file; peak RSS of
// the child from wait4.
SpawnResult SpawnMeasured(const std::vector<std::string>& args, const std::string& err_file) {
  std::vector<char*> argv;
  std::string bin = SchedmateBinary();
  argv.push_back(bin.data());
  std::vector<std::string> copy = args;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  SpawnResult out;
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, bin.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return out;
  int status = 0;
  struct rusage ru {};
  // Polled with a bound: a reader that never ends is killed after 60 s (and fails the test).
  pid_t done = 0;
  while ((done = ::wait4(pid, &status, WNOHANG, &ru)) == 0) {
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(60)) {
      ::kill(pid, SIGKILL);
      done = ::wait4(pid, &status, 0, &ru);
      break;
    }
    const struct timespec tick = {0, 10'000'000};
    ::nanosleep(&tick, nullptr);
  }
  if (done != pid) return out;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  out.max_rss_kb = ru.ru_maxrss;
  std::ifstream in(err_file);
  out.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return out;
}

// Defect 7: `trace stats /dev/zero` grew memory without bound.
TEST(FileSafetyTest, TraceStatsOnDevZeroEndsQuickly) {
  TempDir dir;
  auto r = RunShell("timeout -k 5 20 " + ShellQuote(SchedmateBinary()) + " trace stats /dev/zero");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("/dev/zero"), std::string::npos) << r.err;
  // Its peak memory and time: the old reader copied /dev/zero until its 4 GiB cap.
  auto m = SpawnMeasured({"trace", "stats", "/dev/zero"}, dir.File("err"));
  EXPECT_EQ(m.exit_code, 1) << m.err;
  EXPECT_LT(m.max_rss_kb, 256 * 1024);
  EXPECT_LT(m.seconds, 10.0);
}

// Defect 7: `trace stats` on a 2 GB sparse file read it into 2.1 GB of heap before deciding it
// was not a trace. Now it is refused from its size (or its first bytes) with a small footprint.
TEST(FileSafetyTest, TraceStatsOnASparse2GbFileStaysSmall) {
  TempDir dir;
  const std::string sparse = dir.File("huge.csv");
  ASSERT_EQ(RunShell("truncate -s 2G " + ShellQuote(sparse)).exit_code, 0);
  auto m = SpawnMeasured({"trace", "stats", sparse}, dir.File("err"));
  EXPECT_EQ(m.exit_code, 1) << m.err;
  EXPECT_NE(m.err.find(sparse), std::string::npos) << m.err;
  EXPECT_LT(m.max_rss_kb, 256 * 1024) << "peak RSS " << m.max_rss_kb << " KiB";
  EXPECT_LT(m.seconds, 10.0);
}

}  // namespace
}  // namespace schedmate
