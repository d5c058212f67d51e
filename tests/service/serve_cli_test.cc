// `schedmate serve` start-up refusals, run as a real process (no Slurm needed: each refusal
// happens before the first tick). Every run is bounded by timeout(1), so a binary that does not
// refuse fails the test instead of hanging it.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "core/file_util.h"
#include "testing/test_util.h"

namespace schedmate {
namespace {

using testing::RunShell;
using testing::SchedmateBinary;
using testing::ShellQuote;
using testing::TempDir;

class ServiceServeCli : public ::testing::Test {
 protected:
  // `schedmate serve --slurm --data-dir <tmp> --port 0 <args>`, killed (TERM) after `seconds`.
  testing::CommandResult Serve(const std::string& args, int seconds = 10) {
    return RunShell(fmt::format(
        "env -u SCHEDMATE_API_TOKEN timeout -s TERM {} {} serve --slurm --data-dir {} --port 0 "
        "--poll 60 {}",
        seconds, ShellQuote(SchedmateBinary()), ShellQuote(dir_.File("data")), args));
  }
  std::string TokenFile(mode_t mode) {
    std::string path = dir_.File(fmt::format("token-{:o}", mode));
    EXPECT_OK(WriteStringToFile(path, "s3cret\n"));
    EXPECT_EQ(chmod(path.c_str(), mode), 0);
    return path;
  }
  TempDir dir_;
};

TEST_F(ServiceServeCli, TokenFileReadableByOthersIsRefusedNamingTheFile) {
  for (mode_t mode : {0644, 0640, 0604, 0660}) {
    SCOPED_TRACE(fmt::format("mode {:04o}", mode));
    std::string token = TokenFile(mode);
    auto run = Serve("--token-file " + ShellQuote(token));
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_NE(run.err.find(token), std::string::npos) << run.err;
  }
}

TEST_F(ServiceServeCli, NonLoopbackListenNeedsATokenOrAnExplicitAllowance) {
  auto refused = Serve("--listen 0.0.0.0");
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("0.0.0.0"), std::string::npos) << refused.err;
  // Allowed explicitly: it starts (and is stopped by timeout's TERM), with a loud warning.
  std::string port_file = dir_.File("port");
  auto allowed =
      Serve("--listen 0.0.0.0 --allow-remote --port-file " + ShellQuote(port_file), /*seconds=*/2);
  EXPECT_EQ(allowed.exit_code, 124) << allowed.err;  // ran until timeout stopped it
  EXPECT_TRUE(std::filesystem::exists(port_file)) << allowed.err;
  EXPECT_NE(allowed.err.find("WARNING"), std::string::npos) << allowed.err;
}

}  // namespace
}  // namespace schedmate
