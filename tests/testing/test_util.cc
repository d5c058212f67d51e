#include "testing/test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace schedmate::testing {
namespace fs = std::filesystem;

std::string SourceDir() { return SCHEDMATE_SOURCE_DIR; }
std::string TestDataPath(const std::string& relative) {
  return SourceDir() + "/tests/data/" + relative;
}

std::optional<std::string> SharedDir() {
  if (const char* env = std::getenv("SCHEDMATE_SHARED_DIR")) {
    if (fs::is_directory(env)) return std::string(env);
    return std::nullopt;
  }
  fs::path p = fs::path(SourceDir()).parent_path() / "shared";
  if (fs::is_directory(p)) return p.string();
  return std::nullopt;
}

std::optional<std::string> SharedPath(const std::string& relative) {
  auto dir = SharedDir();
  if (!dir) return std::nullopt;
  fs::path p = fs::path(*dir) / relative;
  if (!fs::exists(p)) return std::nullopt;
  return p.string();
}

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "schedmate-test-XXXXXX").string();
  char* made = mkdtemp(tmpl.data());
  path_ = made ? made : tmpl;
}
TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

CommandResult RunShell(const std::string& command) {
  TempDir tmp;
  std::string full = "( " + command + " ) >" + tmp.File("out") + " 2>" + tmp.File("err");
  int rc = std::system(full.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
  auto slurp = [](const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  r.out = slurp(tmp.File("out"));
  r.err = slurp(tmp.File("err"));
  return r;
}

std::string SchedmateBinary() {
  if (const char* env = std::getenv("SCHEDMATE_BIN")) return env;
  return SCHEDMATE_BINARY_PATH;
}

CommandResult RunSchedmate(const std::string& args) {
  return RunShell("SCHEDMATE_NO_PROGRESS=1 " + ShellQuote(SchedmateBinary()) + " " + args);
}

}  // namespace schedmate::testing
