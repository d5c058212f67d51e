// The shipped Prometheus rules and Grafana dashboard against a real Prometheus (Debian's
// `prometheus` package, installed by scripts/install-deps.sh --test): promtool checks the rules and
// runs their unit tests (config/prometheus/alerts_test.yml: every alert fires on a scripted
// series and stays quiet on a healthy one); a real Prometheus scrapes a running API server's
// /metrics, loads the rules and evaluates them on the scraped data; the dashboard's queries only
// name metrics the server exports. Skips when the binaries are not installed
// (SCHEDMATE_PROMETHEUS_BIN / SCHEDMATE_PROMTOOL_BIN override /usr/bin).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

#include "api_fixture.h"
#include "core/file_util.h"

extern char** environ;

namespace schedmate::api::testing {
namespace {

using nlohmann::json;
using schedmate::testing::RunShell;
using schedmate::testing::ShellQuote;

std::string Bin(const char* env, const char* fallback) {
  const char* e = std::getenv(env);
  return e != nullptr && *e != '\0' ? e : fallback;
}

std::string RepoPath(const std::string& rel) {
  return std::string(SCHEDMATE_SOURCE_DIR) + "/" + rel;
}

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof(a);
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

// A Prometheus process for one test; stopped (SIGTERM, then SIGKILL) when destroyed.
class PrometheusProcess {
 public:
  ~PrometheusProcess() { Stop(); }
  Status Start(const std::string& bin, const std::string& config, const std::string& dir,
               int port) {
    std::vector<std::string> args = {
        bin, "--config.file=" + config, "--storage.tsdb.path=" + dir + "/tsdb",
        "--web.listen-address=127.0.0.1:" + std::to_string(port), "--log.level=warn"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    log_ = dir + "/prometheus.log";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    const int rc = posix_spawn(&pid_, bin.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return Status::Unavailable("cannot start " + bin);
    return Status::Ok();
  }
  void Stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 100 && ::waitpid(pid_, nullptr, WNOHANG) != pid_; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, WNOHANG);
    pid_ = -1;
  }
  std::string Log() const {
    auto t = ReadFileToString(log_);
    return t.ok() ? *t : "";
  }

 private:
  pid_t pid_ = -1;
  std::string log_;
};

// GET http://127.0.0.1:port/api/v1/... until `done(json)` holds or `seconds` pass; the last body.
json PollApi(int port, const std::string& path, const std::function<bool(const json&)>& done,
             int seconds) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(2);
  json last;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto r = c.Get(path); r && r->status == 200) {
      last = json::parse(r->body, nullptr, false);
      if (!last.is_discarded() && done(last)) return last;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return last;
}

// The value of the first sample of an instant query, or -1.
double FirstValue(const json& q) {
  if (!q.contains("data") || q["data"]["result"].empty()) return -1;
  return std::stod(q["data"]["result"][0]["value"][1].get<std::string>());
}

TEST(PrometheusRulesTest, PromtoolChecksAndUnitTestsTheShippedRules) {
  const std::string promtool = Bin("SCHEDMATE_PROMTOOL_BIN", "/usr/bin/promtool");
  if (!std::filesystem::exists(promtool)) GTEST_SKIP() << promtool << " not installed";
  auto check = RunShell(ShellQuote(promtool) + " check rules " +
                        ShellQuote(RepoPath("config/prometheus/alerts.yml")));
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_NE(check.out.find("5 rules found"), std::string::npos) << check.out;
  // `promtool test rules` resolves rule_files relative to the test file.
  auto unit = RunShell(ShellQuote(promtool) + " test rules " +
                       ShellQuote(RepoPath("config/prometheus/alerts_test.yml")));
  EXPECT_EQ(unit.exit_code, 0) << unit.out << unit.err;
}

TEST(GrafanaDashboardTest, IsValidJsonWithPanelsAndQueries) {
  auto text = ReadFileToString(RepoPath("config/grafana/schedmate-dashboard.json"));
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  json d = json::parse(*text, nullptr, false);
  ASSERT_FALSE(d.is_discarded());
  EXPECT_EQ(d["uid"], "schedmate-companion");
  ASSERT_TRUE(d["panels"].is_array());
  EXPECT_GE(d["panels"].size(), 8u);
  std::set<int> ids;
  for (const json& p : d["panels"]) {
    EXPECT_TRUE(ids.insert(p["id"].get<int>()).second) << "duplicate panel id";
    ASSERT_FALSE(p["targets"].empty()) << p["title"];
    for (const json& t : p["targets"]) EXPECT_FALSE(t["expr"].get<std::string>().empty());
  }
}

class PrometheusScrapeTest : public ApiFixture {};

// A real Prometheus scrapes the API server, loads the shipped rules and evaluates them; when the
// server goes away the scrape fails and SchedmateDown becomes pending on real data. The
// dashboard's metric names are all in the scraped exposition.
TEST_F(PrometheusScrapeTest, RealPrometheusScrapesMetricsAndEvaluatesTheRules) {
  const std::string prometheus = Bin("SCHEDMATE_PROMETHEUS_BIN", "/usr/bin/prometheus");
  if (!std::filesystem::exists(prometheus)) GTEST_SKIP() << prometheus << " not installed";
  cluster_.AddNode("gpu1", 8);
  cluster_.Render();
  CreateCompanion();
  StartServer();
  auto metrics = client_->Get("/metrics");
  ASSERT_TRUE(metrics && metrics->status == 200);

  const int port = FreePort();
  ASSERT_GT(port, 0);
  const std::string config = dir_.File("prometheus.yml");
  ASSERT_OK(
      WriteStringToFile(config,
                        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                        "rule_files:\n  - " +
                            RepoPath("config/prometheus/alerts.yml") +
                            "\nscrape_configs:\n  - job_name: schedmate\n    static_configs:\n"
                            "      - targets: ['127.0.0.1:" +
                            std::to_string(server_->port()) + "']\n"));
  PrometheusProcess p;
  ASSERT_OK(p.Start(prometheus, config, dir_.path(), port));

  json up = PollApi(
      port, "/api/v1/query?query=schedmate_up", [](const json& q) { return FirstValue(q) == 1; },
      60);
  ASSERT_EQ(FirstValue(up), 1) << up.dump() << p.Log();
  json slurm = PollApi(
      port, "/api/v1/query?query=schedmate_slurm_ok",
      [](const json& q) { return FirstValue(q) >= 0; }, 10);
  EXPECT_EQ(FirstValue(slurm), 1) << slurm.dump();

  // Every rule of the group loaded and evaluated without error.
  json rules = PollApi(
      port, "/api/v1/rules",
      [](const json& r) {
        if (r["data"]["groups"].empty()) return false;
        for (const json& rule : r["data"]["groups"][0]["rules"]) {
          if (rule["health"] != "ok") return false;
        }
        return true;
      },
      30);
  ASSERT_EQ(rules["data"]["groups"].size(), 1u) << rules.dump();
  EXPECT_EQ(rules["data"]["groups"][0]["name"], "schedmate");
  EXPECT_EQ(rules["data"]["groups"][0]["rules"].size(), 5u);
  for (const json& rule : rules["data"]["groups"][0]["rules"])
    EXPECT_EQ(rule["health"], "ok") << rule.dump();

  // The dashboard queries only metrics the server exports (or Prometheus' own `up`).
  auto dash = ReadFileToString(RepoPath("config/grafana/schedmate-dashboard.json"));
  ASSERT_TRUE(dash.ok());
  const std::regex kName(R"(schedmate_[a-z_]+)");
  for (std::sregex_iterator it(dash->begin(), dash->end(), kName), end; it != end; ++it) {
    std::string name = it->str();
    for (const char* suffix : {"_sum", "_count"}) {
      if (name.size() > 4 &&
          name.compare(name.size() - std::strlen(suffix), std::string::npos, suffix) == 0)
        name.resize(name.size() - std::strlen(suffix));
    }
    EXPECT_NE(metrics->body.find(name), std::string::npos) << name;
  }

  // The companion goes away: the scrape fails (up == 0) and SchedmateDown is pending (for: 2m).
  server_->Stop();
  json down = PollApi(
      port, "/api/v1/alerts",
      [](const json& a) {
        for (const json& alert : a["data"]["alerts"]) {
          if (alert["labels"]["alertname"] == "SchedmateDown") return true;
        }
        return false;
      },
      30);
  bool pending = false;
  for (const json& alert : down["data"]["alerts"]) {
    if (alert["labels"]["alertname"] == "SchedmateDown") {
      pending = alert["state"] == "pending" || alert["state"] == "firing";
      EXPECT_EQ(alert["labels"]["severity"], "critical");
    }
  }
  EXPECT_TRUE(pending) << down.dump() << p.Log();
}

}  // namespace
}  // namespace schedmate::api::testing
