#pragma once
// Shared test helpers: status assertions, fixture paths, running the schedmate binary.

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "core/result.h"
#include "core/status.h"

#define ASSERT_OK(expr)                                          \
  do {                                                           \
    const auto& sm_s_ = (expr);                                  \
    ASSERT_TRUE(::schedmate::testing::StatusOf(sm_s_).ok())      \
        << ::schedmate::testing::StatusOf(sm_s_).ToString();     \
  } while (0)
#define EXPECT_OK(expr)                                          \
  do {                                                           \
    const auto& sm_s_ = (expr);                                  \
    EXPECT_TRUE(::schedmate::testing::StatusOf(sm_s_).ok())      \
        << ::schedmate::testing::StatusOf(sm_s_).ToString();     \
  } while (0)

namespace schedmate::testing {

inline const Status& StatusOf(const Status& s) { return s; }
template <typename T>
const Status& StatusOf(const Result<T>& r) { return r.status(); }

// The project's source directory and tests/data.
std::string SourceDir();
std::string TestDataPath(const std::string& relative);  // tests/data/<relative>

// ../shared beside the checkout (or $SCHEDMATE_SHARED_DIR), or nullopt when absent.
std::optional<std::string> SharedDir();
// <shared>/<relative> if it exists, else nullopt. Tests use it with GTEST_SKIP().
std::optional<std::string> SharedPath(const std::string& relative);

// A fresh temporary directory, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};
// Runs `command` through /bin/sh, capturing stdout and stderr.
CommandResult RunShell(const std::string& command);
// Path to the built schedmate binary.
std::string SchedmateBinary();
// Runs `schedmate <args>` (args already shell-quoted by the caller where needed).
CommandResult RunSchedmate(const std::string& args);
// Single-quotes `s` for /bin/sh.
std::string ShellQuote(const std::string& s);

}  // namespace schedmate::testing

#define SM_SKIP_WITHOUT_SHARED(var, relative)                                      \
  auto var##_opt = ::schedmate::testing::SharedPath(relative);                     \
  if (!var##_opt) GTEST_SKIP() << "../shared/" << relative << " not available";    \
  const std::string var = *var##_opt
