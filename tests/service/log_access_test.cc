#include "service/log_access.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "core/file_util.h"
#include "testing/test_util.h"

namespace schedmate::service {
namespace {

using schedmate::testing::TempDir;

std::string MyUserName() {
  passwd* pw = getpwuid(geteuid());
  return pw != nullptr ? pw->pw_name : "";
}

// A job of `user` whose working directory is `dir` and whose StdOut is `out`.
JobLogScope Scope(const std::string& user, const std::string& dir, const std::string& out) {
  return JobLogScope{user, dir, out, ""};
}

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST(LogAccess, ReadsTailOfTheJobUsersOwnRegularFile) {
  TempDir dir;
  std::string log = dir.File("a.log");
  ASSERT_OK(WriteStringToFile(log, "0123456789"));
  auto tail = ReadJobLogTail(log, Scope(MyUserName(), dir.path(), log), 4);
  ASSERT_OK(tail);
  EXPECT_EQ(tail->text, "6789");
  EXPECT_TRUE(tail->truncated);
  EXPECT_EQ(tail->size, 10);
  EXPECT_OK(CheckJobLog(log, Scope(MyUserName(), dir.path(), log)));
}

TEST(LogAccess, RefusesSymlinksRelativePathsDirectoriesFifosAndMissingFiles) {
  TempDir dir;
  JobLogScope scope = Scope(MyUserName(), dir.path(), dir.File("x.log"));
  std::filesystem::create_symlink("/etc/passwd", dir.File("link.log"));
  EXPECT_EQ(ReadJobLogTail(dir.File("link.log"), scope, 100).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReadJobLogTail("relative/x.log", scope, 100).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadJobLogTail(dir.path() + "/", scope, 100).status().code(),
            StatusCode::kInvalidArgument);
  std::filesystem::create_directories(dir.File("sub"));
  EXPECT_EQ(ReadJobLogTail(dir.File("sub"), scope, 100).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReadJobLogTail(dir.File("none"), scope, 100).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadJobLogTail(dir.File("nodir/none"), scope, 100).status().code(),
            StatusCode::kNotFound);
  // A FIFO with no writer is refused at once, never waited on.
  ASSERT_EQ(mkfifo(dir.File("fifo.log").c_str(), 0600), 0);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(ReadJobLogTail(dir.File("fifo.log"), scope, 100).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

// Defect: an empty or unresolvable user fell back to the service's own uid, so under a root
// service every root-owned file (/etc/shadow) passed.
TEST(LogAccess, EmptyOrUnknownUserIsRefusedNeverTheServicesOwnUid) {
  TempDir dir;
  std::string log = dir.File("mine.log");
  ASSERT_OK(WriteStringToFile(log, "secret"));  // owned by the user running the test
  for (const std::string user : {"", "schedmate-no-such-user-4711"}) {
    SCOPED_TRACE("user '" + user + "'");
    auto tail = ReadJobLogTail(log, Scope(user, dir.path(), log), 100);
    EXPECT_EQ(tail.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_EQ(CheckJobLog(log, Scope(user, dir.path(), log)).code(),
              StatusCode::kFailedPrecondition);
  }
  if (std::filesystem::exists("/etc/shadow")) {
    for (const std::string user : {"", "schedmate-no-such-user-4711", "nobody"}) {
      SCOPED_TRACE("/etc/shadow for user '" + user + "'");
      auto shadow = ReadJobLogTail("/etc/shadow", Scope(user, "/etc", "/etc/shadow"), 100);
      EXPECT_FALSE(shadow.ok());
    }
  }
}

TEST(LogAccess, FileMustBelongToTheJobsUserRootFilesOnlyToRootsJobs) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to chown a file to another user";
  passwd* nobody = getpwnam("nobody");
  if (nobody == nullptr) GTEST_SKIP() << "no user 'nobody' here";
  TempDir dir;
  std::string root_log = dir.File("root.log");
  std::string nobody_log = dir.File("nobody.log");
  ASSERT_OK(WriteStringToFile(root_log, "root secret"));
  ASSERT_OK(WriteStringToFile(nobody_log, "nobody's log"));
  ASSERT_EQ(chown(nobody_log.c_str(), nobody->pw_uid, nobody->pw_gid), 0);
  // A root-owned file claimed as the output of a job of "nobody" is not read...
  EXPECT_EQ(ReadJobLogTail(root_log, Scope("nobody", dir.path(), root_log), 100).status().code(),
            StatusCode::kFailedPrecondition);
  // ... nor another user's file for a root job; each user's own file is.
  EXPECT_EQ(ReadJobLogTail(nobody_log, Scope("root", dir.path(), nobody_log), 100).status().code(),
            StatusCode::kFailedPrecondition);
  auto own = ReadJobLogTail(nobody_log, Scope("nobody", dir.path(), nobody_log), 100);
  ASSERT_OK(own);
  EXPECT_EQ(own->text, "nobody's log");
  EXPECT_OK(ReadJobLogTail(root_log, Scope("root", dir.path(), root_log), 100));
}

TEST(LogAccess, FileMustLieUnderTheJobsWorkingOrOutputDirectory) {
  TempDir dir;
  std::filesystem::create_directories(dir.File("work"));
  std::filesystem::create_directories(dir.File("elsewhere"));
  std::string other = dir.File("elsewhere/x.log");
  ASSERT_OK(WriteStringToFile(other, "not this job's"));
  std::string user = MyUserName();
  EXPECT_EQ(ReadJobLogTail(other, Scope(user, dir.File("work"), dir.File("work/o.out")), 100)
                .status()
                .code(),
            StatusCode::kFailedPrecondition);
  // A directory symlink inside the work dir that points out of it does not widen the bound.
  std::filesystem::create_directory_symlink(dir.File("elsewhere"), dir.File("work/escape"));
  EXPECT_EQ(ReadJobLogTail(dir.File("work/escape/x.log"),
                           Scope(user, dir.File("work"), dir.File("work/o.out")), 100)
                .status()
                .code(),
            StatusCode::kFailedPrecondition);
  // Output outside the work dir is fine when Slurm reports it there (sbatch -o /scratch/...).
  EXPECT_OK(ReadJobLogTail(other, Scope(user, dir.File("work"), other), 100));
  // Nothing known about where the job writes: refused.
  EXPECT_EQ(ReadJobLogTail(other, JobLogScope{user, "", "", ""}, 100).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST(LogAccess, CapturedCopiesArePrivateAndNeverFollowSymlinks) {
  TempDir dir;
  std::string logs = dir.File("data/logs");
  std::filesystem::create_directories(logs);
  ASSERT_EQ(chmod(logs.c_str(), 0755), 0);
  ASSERT_OK(EnsurePrivateDir(logs));
  EXPECT_EQ(ModeOf(logs), 0700u);
  auto path = WriteCapturedLog(logs, "7-100.log", "Xid 79\n");
  ASSERT_OK(path);
  EXPECT_EQ(ModeOf(*path), 0600u);
  // An older copy with a wider mode is tightened when rewritten.
  ASSERT_EQ(chmod(path->c_str(), 0644), 0);
  ASSERT_OK(WriteCapturedLog(logs, "7-100.log", "again\n"));
  EXPECT_EQ(ModeOf(*path), 0600u);
  auto back = ReadCapturedLogTail(*path, logs, 100);
  ASSERT_OK(back);
  EXPECT_EQ(back->text, "again\n");
  // A symlink planted at the copy's name is neither followed nor its target touched.
  std::string target = dir.File("target.txt");
  ASSERT_OK(WriteStringToFile(target, "keep"));
  std::filesystem::create_symlink(target, logs + "/8-100.log");
  EXPECT_FALSE(WriteCapturedLog(logs, "8-100.log", "overwrite").ok());
  EXPECT_EQ(ReadFileToString(target).value_or(""), "keep");
  EXPECT_FALSE(ReadCapturedLogTail(logs + "/8-100.log", logs, 100).ok());
  EXPECT_FALSE(WriteCapturedLog(logs, "../escape.log", "x").ok());
  EXPECT_EQ(ReadCapturedLogTail(target, logs, 100).status().code(),
            StatusCode::kFailedPrecondition);
  // The logs directory itself must not be a symlink.
  std::filesystem::create_directory_symlink(dir.path(), dir.File("data/linked"));
  EXPECT_FALSE(EnsurePrivateDir(dir.File("data/linked")).ok());
}

TEST(LogAccess, PathIsInsideResolvesDotDot) {
  TempDir dir;
  std::filesystem::create_directories(dir.File("logs"));
  EXPECT_TRUE(PathIsInside(dir.File("logs/1.log"), dir.File("logs")));
  EXPECT_FALSE(PathIsInside(dir.File("logs/../state.db"), dir.File("logs")));
  EXPECT_FALSE(PathIsInside(dir.File("logs2/x"), dir.File("logs")));
}

}  // namespace
}  // namespace schedmate::service
