#pragma once
// ArrayJobRunner: runs one command per index as a Slurm job array (sbatch --array) and waits for
// it, through a CommandRunner (FakeCommandRunner in unit tests). Used by `schedmate tune
// --via-slurm`: the site's own cluster runs the sweep, one array task per chunk of candidates.
//
// The batch script (ArrayBatchScript) is deterministic text: `#SBATCH` lines for the name, the
// array range 0..tasks-1 with an optional `%max_parallel`, partition, time limit, one CPU per
// task and a log per task (`<dir>/<name>-%A-%a.log`), then `exec` of the command. Each argument
// is single-quoted for the shell; the tokens `{task}` and `{job}` inside an argument become the
// task's SLURM_ARRAY_TASK_ID and the array's SLURM_ARRAY_JOB_ID, so tasks write to distinct
// files and a rerun never reads an earlier run's outputs.
//
// Waiting polls `squeue -h -r --states=all -j ID -o %i|%T|%r` (each task on its own line while
// slurmctld remembers it: MinJobAge after it ended). A task is done when its state is terminal
// (COMPLETED is success; FAILED, CANCELLED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, PREEMPTED,
// BOOT_FAIL, DEADLINE are failures). When squeue no longer knows the job before every task was
// seen ending, `sacct -n -X -P -j ID -o JobID,State` (accounting) gives the rest; tasks neither
// shows are reported with state "UNKNOWN" and `known = false` (the caller judges them by their
// output files). Past `timeout` the array is cancelled (scancel) when `cancel_on_timeout`, and the
// outcome says which tasks had not ended. Not thread-safe (one wait at a time per runner).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "core/sim_time.h"
#include "slurm/command_runner.h"

namespace schedmate::slurm {

struct ArrayJobSpec {
  std::string name = "schedmate-array";  // --job-name; also the script and log file stem
  int32_t tasks = 0;                     // array indices 0..tasks-1 (1..100000)
  int32_t max_parallel = 0;              // %N: at most N tasks run at once; 0 = no limit
  std::string partition;                 // "" = the cluster's default partition
  std::string time_limit;                // sbatch --time value ("30", "1:00:00"); "" = default
  std::string dir;                       // absolute, shared with the compute nodes: script, logs
  std::vector<std::string> command;      // argv of every task ({task}, {job} substituted)
};

// kInvalidArgument naming the field when the spec cannot make a valid script: no command, tasks
// outside 1..100000, max_parallel negative, a relative dir, a name or partition or time limit
// with characters outside [A-Za-z0-9._:,+-].
Status CheckArrayJobSpec(const ArrayJobSpec& spec);

// The sbatch script for `spec` (REQUIRES: CheckArrayJobSpec(spec).ok()).
std::string ArrayBatchScript(const ArrayJobSpec& spec);

// Where task `task` of array `job_id` writes its Slurm log.
std::string ArrayTaskLogPath(const ArrayJobSpec& spec, const std::string& job_id, int32_t task);

struct ArrayTaskState {
  int32_t index = 0;
  std::string state = "PENDING";  // Slurm's state as last seen
  std::string reason;             // squeue's reason (NonZeroExitCode, ...), "" when none
  bool ended = false;             // a terminal state was seen
  bool known = true;              // false: squeue and sacct both forgot the task
  bool succeeded() const { return ended && state == "COMPLETED"; }
};

struct ArrayProgress {
  int32_t tasks = 0, pending = 0, running = 0, completed = 0, failed = 0;
  bool operator==(const ArrayProgress&) const = default;
};

struct ArrayWaitOptions {
  Duration poll = Duration::Seconds(5);
  Duration timeout = Duration::Hours(1);
  Duration command_timeout = Duration::Seconds(60);  // per squeue/sacct/scancel call
  bool cancel_on_timeout = true;
  // Called after each poll whose counts differ from the previous one's. May be empty.
  std::function<void(const ArrayProgress&)> on_progress;
  // Waits `d` of real time between polls (tests advance a FakeClock instead). Empty: sleeps.
  std::function<void(Duration)> sleep;
};

struct ArrayOutcome {
  std::string job_id;
  std::vector<ArrayTaskState> tasks;  // by index
  bool timed_out = false;
  bool cancelled = false;  // scancel succeeded after the timeout
  // Indices of tasks that ended in a failure state, ascending.
  std::vector<int32_t> FailedTasks() const;
  // Indices of tasks that had not ended (timeout) or that Slurm forgot, ascending.
  std::vector<int32_t> UnfinishedTasks() const;
};

class ArrayJobRunner {
 public:
  // `runner` and `clock` must outlive this object.
  ArrayJobRunner(CommandRunner& runner, const Clock& clock) : runner_(runner), clock_(clock) {}

  // Writes the script into spec.dir (`<name>.sbatch`, replaced) and submits it with
  // `sbatch --parsable`. Returns the array's job id. Errors: the spec's (kInvalidArgument), the
  // script file's, kUnavailable when sbatch cannot run or refuses (its stderr in the message).
  Result<std::string> Submit(const ArrayJobSpec& spec, Duration command_timeout);

  // Polls until every task of `job_id` (indices 0..tasks-1) ended, or `options.timeout` passed.
  // A timeout is not an error: the outcome says so. Errors: kUnavailable when squeue cannot run.
  Result<ArrayOutcome> Wait(const std::string& job_id, int32_t tasks,
                            const ArrayWaitOptions& options);

  // scancel JOB_ID. kUnavailable with scancel's stderr when it fails.
  Status Cancel(const std::string& job_id, Duration command_timeout);

 private:
  // One squeue poll: updates `tasks`; false when squeue no longer knows the job.
  Result<bool> PollSqueue(const std::string& job_id, std::vector<ArrayTaskState>& tasks,
                          Duration command_timeout);
  // sacct for tasks squeue forgot; tasks sacct does not list become unknown.
  void ResolveForgotten(const std::string& job_id, std::vector<ArrayTaskState>& tasks,
                        Duration command_timeout);

  CommandRunner& runner_;
  const Clock& clock_;
};

// Whether `state` (Slurm's base state, e.g. COMPLETED, FAILED) is terminal.
bool IsTerminalJobState(std::string_view state);

}  // namespace schedmate::slurm
