#pragma once
// FakeCluster: a scripted Slurm for service and API tests. Holds jobs and nodes as values and
// renders them into the squeue/sinfo JSON and scontrol lines a FakeCommandRunner answers with,
// in the shapes captured from Slurm 22.05 (tests/data/slurm/).

#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "slurm/fake_command_runner.h"

namespace schedmate::service::testing {

// The user running the tests: the files a test writes are that user's, and the service reads a
// job's log only as its user's own file (service/log_access.h).
inline std::string TestUserName() {
  passwd* pw = getpwuid(geteuid());
  return pw != nullptr ? pw->pw_name : "root";
}

struct FakeJob {
  std::string id;
  std::string name = "job";
  std::string user = TestUserName();
  std::string state = "PENDING";
  std::string reason = "None";
  int gpus_per_node = 1;
  int nodes = 1;
  std::string node;    // allocated node ("" when pending)
  int64_t submit = 0;  // epoch seconds
  int64_t start = 0;
  int64_t end = 0;
  int64_t eligible = 0;  // epoch seconds, 0 = not set
  int exit_code = 0;     // plain exit code (rendered as a raw wait status)
  int restarts = 0;
  int64_t priority = 1000;
  int64_t nice = 0;
  std::string std_out;  // absolute path
  std::string script = "#!/bin/bash\necho hi\n";
  std::optional<int64_t> time_limit_min;
};

class FakeCluster {
 public:
  explicit FakeCluster(slurm::FakeCommandRunner& runner) : runner_(runner) {
    runner_.SetOutput({"scontrol", "update"}, "");
    runner_.SetOutput({"scontrol", "requeue"}, "");
    runner_.SetOutput({"scontrol", "requeuehold"}, "");
    runner_.SetOutput({"scontrol", "hold"}, "");
  }
  void AddNode(const std::string& name, int gpus) { nodes_[name] = {gpus, "", false}; }
  void SetDrained(const std::string& name, const std::string& reason) {
    nodes_[name].reason = reason;
    nodes_[name].drained = true;
  }
  FakeJob& Job(const std::string& id) { return jobs_[id]; }
  void Remove(const std::string& id) { jobs_.erase(id); }

  // Pushes the current state into the runner.
  void Render() {
    nlohmann::json jobs = nlohmann::json::array();
    for (const auto& [id, j] : jobs_) {
      jobs.push_back({{"job_id", std::stoll(j.id)},
                      {"name", j.name},
                      {"user_name", j.user},
                      {"partition", "gpu"},
                      {"job_state", j.state},
                      {"state_reason", j.reason},
                      {"priority", j.priority},
                      {"nice", j.nice == 0 ? nlohmann::json(nullptr) : nlohmann::json(j.nice)},
                      {"node_count", j.nodes},
                      {"tres_per_node",
                       j.gpus_per_node > 0 ? fmt::format("gres:gpu:{}", j.gpus_per_node) : ""},
                      {"tres_per_job", ""},
                      {"nodes", j.node},
                      {"submit_time", j.submit},
                      {"start_time", j.start},
                      {"end_time", j.end},
                      {"eligible_time", j.eligible},
                      {"time_limit", j.time_limit_min ? nlohmann::json(*j.time_limit_min)
                                                      : nlohmann::json(nullptr)},
                      {"exit_code", j.exit_code * 256},
                      {"restart_cnt", j.restarts},
                      {"comment", ""},
                      {"command", "/x.sh"},
                      {"current_working_directory", "/tmp"},
                      {"standard_output", "%x-%j.out"},
                      {"standard_error", ""}});
      runner_.SetOutput({"scontrol", "show", "job", "-d", "-o", id},
                        fmt::format("JobId={} JobName={} UserId={}(0) JobState={} Restarts={} "
                                    "ExitCode={}:0 NodeList={} WorkDir=/tmp StdErr={} StdOut={} \n",
                                    id, j.name, j.user, j.state, j.restarts, j.exit_code,
                                    j.node.empty() ? "(null)" : j.node, j.std_out, j.std_out));
      runner_.SetOutput({"scontrol", "write", "batch_script", id, "-"}, j.script);
    }
    runner_.SetOutput({"squeue", "--json"}, nlohmann::json{{"jobs", jobs}}.dump());
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& [name, n] : nodes_) {
      int used = 0;
      for (const auto& [id, j] : jobs_)
        if (j.state == "RUNNING" && j.node == name) used += j.gpus_per_node;
      nodes.push_back(
          {{"name", name},
           {"state", used > 0 ? "mixed" : "idle"},
           {"state_flags", n.drained ? nlohmann::json::array({"DRAIN"}) : nlohmann::json::array()},
           {"gres", fmt::format("gpu:{}", n.gpus)},
           {"gres_used", fmt::format("gpu:{}", used)},
           {"cpus", 8},
           {"reason", n.reason},
           {"partitions", {"gpu"}}});
    }
    runner_.SetOutput({"sinfo", "--json"}, nlohmann::json{{"nodes", nodes}}.dump());
  }

 private:
  struct Node {
    int gpus = 8;
    std::string reason;
    bool drained = false;
  };
  slurm::FakeCommandRunner& runner_;
  std::map<std::string, FakeJob> jobs_;
  std::map<std::string, Node> nodes_;
};

}  // namespace schedmate::service::testing
