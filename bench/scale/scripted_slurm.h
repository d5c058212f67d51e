#pragma once
// ScriptedSlurm: a CommandRunner that plays a large Slurm 22.05 cluster for the scale benchmark.
//
// The cluster is generated from a seed: `pending` pending and `running` running jobs on 8-GPU
// nodes (two running jobs of at most 4 GPUs per node). squeue/sinfo answers are rendered in the
// full Slurm 22.05 `--json` shapes: every field of the repository's own recorded outputs
// (tests/data/slurm/squeue_mixed.json, sinfo_two_nodes.json) is kept from those templates and the
// fields the parsers read are set per job, pretty-printed as squeue prints them. `scontrol show
// job -d -o`, `scontrol write batch_script`, `sacct -X -n -P` (kSacctFormat) and the actions
// (`scontrol update|requeue|hold|release|requeuehold`) are answered too.
//
// Advance() plays one poll interval: `churn` running jobs end (every tenth FAILED with exit code
// 1), as many pending jobs start in their slots (their log files created and handed to the
// LogSink), and as many new jobs are submitted. Answers are rendered in Advance(), not in Run(),
// so a poll pass measures the companion, not the generator. Thread-safe.

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/rng.h"
#include "slurm/command_runner.h"

namespace schedmate::bench {

struct ScaleOptions {
  int pending = 10000;
  int running = 2000;
  int churn = 10;  // jobs ending / starting / submitted per Advance()
  uint64_t seed = 1;
  std::string dir;                       // temp dir: logs/ and jobs/ are made under it
  std::string template_dir;              // holds squeue_mixed.json and sinfo_two_nodes.json
  int64_t initial_log_bytes = 16 << 10;  // each running job's log starts this long (about)
};

// Told when a running job's log appears or its job ends (the log writer grows live logs).
struct LogSink {
  std::function<void(const std::string& id, const std::string& path, int style)> started;
  std::function<void(const std::string& id)> ended;
};

class ScriptedSlurm final : public slurm::CommandRunner {
 public:
  // Loads the templates and generates the cluster at epoch second `now`. Errors name the file.
  static Result<std::unique_ptr<ScriptedSlurm>> Create(const ScaleOptions& options, int64_t now,
                                                       LogSink sink);

  Result<slurm::CommandOutput> Run(const std::vector<std::string>& argv, Duration timeout) override;

  void Advance(int64_t now);

  // Live (pending or running) job ids, for the API load (stable between Advance() calls).
  std::vector<std::string> LiveIds() const;
  int Nodes() const { return static_cast<int>(node_names_.size()); }
  size_t SqueueBytes() const;
  int64_t Finished() const;
  int64_t Failed() const;

 private:
  struct Job {
    int64_t id = 0;
    std::string name;
    std::string partition;
    std::string state;  // PENDING RUNNING COMPLETED FAILED
    std::string reason;
    int gpus_per_node = 1;
    int nodes = 1;
    int slot = -1;  // running: node index * 2 + half
    int64_t submit = 0, start = 0, end = 0;
    int64_t time_limit_min = 60;
    int64_t priority = 1;
    int exit_code = 0;
    int style = 0;         // log style (log_writer.h)
    int64_t ended_at = 0;  // the Advance() call that ended it (0 = live)
    std::string model, dataset;
    std::string rendered;  // squeue --json object, pretty-printed
  };

  ScriptedSlurm(const ScaleOptions& options, nlohmann::json job_template,
                nlohmann::json node_template, LogSink sink);
  void Generate(int64_t now);
  Job NewPending(int64_t now);
  void StartJob(Job& j, int slot, int64_t now);
  void Render(Job& j) const;
  void RenderAll();
  void PublishAnswers();  // squeue_ and sinfo_ from jobs_ (mu_ held)
  std::string StdOut(const Job& j) const;
  std::string ShowJob(const Job& j) const;
  std::string Script(const Job& j) const;
  std::string Sacct() const;

  ScaleOptions options_;
  nlohmann::json job_template_, node_template_;
  LogSink sink_;
  Rng rng_;
  std::string user_;
  int64_t uid_ = 0;
  int64_t next_id_ = 100000;
  std::vector<std::string> node_names_;
  std::vector<int> free_slots_;

  mutable std::mutex mu_;
  std::map<int64_t, Job> jobs_;  // live jobs and the ones that just ended
  std::vector<Job> ended_;       // runs for sacct (the last few intervals)
  std::string squeue_, sinfo_;
  int64_t finished_ = 0, failed_ = 0;
  int64_t advances_ = 0;
};

}  // namespace schedmate::bench
