#include "service/log_access.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/file_util.h"
#include "testing/test_util.h"

namespace schedmate::service {
namespace {

using schedmate::testing::TempDir;

TEST(LogAccess, ReadsTailOfOwnRegularFile) {
  TempDir dir;
  ASSERT_OK(WriteStringToFile(dir.File("a.log"), "0123456789"));
  auto tail = ReadJobLogTail(dir.File("a.log"), "", 4);
  ASSERT_OK(tail);
  EXPECT_EQ(tail->text, "6789");
  EXPECT_TRUE(tail->truncated);
  EXPECT_EQ(tail->size, 10);
}

TEST(LogAccess, RefusesSymlinksRelativePathsDirectoriesAndOtherOwners) {
  TempDir dir;
  std::filesystem::create_symlink("/etc/passwd", dir.File("link.log"));
  EXPECT_EQ(ReadJobLogTail(dir.File("link.log"), "", 100).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReadJobLogTail("relative/x.log", "", 100).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadJobLogTail(dir.path(), "", 100).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReadJobLogTail(dir.File("none"), "", 100).status().code(), StatusCode::kNotFound);
  if (getuid() == 0) {
    // A root-owned file claimed as the output of a job of user "nobody" is not read.
    ASSERT_OK(WriteStringToFile(dir.File("root.log"), "secret"));
    EXPECT_EQ(ReadJobLogTail(dir.File("root.log"), "nobody", 100).status().code(),
              StatusCode::kFailedPrecondition);
  }
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
