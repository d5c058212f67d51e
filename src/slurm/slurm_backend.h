#pragma once
// SlurmBackend: reads a live Slurm cluster's queue, nodes and finished jobs and acts on it, all
// through Slurm's own command-line tools run by a CommandRunner (squeue/sinfo --json, scontrol,
// sacct). It holds no cluster state of its own: every call asks Slurm.
//
// Finished jobs come from the jobcomp/filetxt file (JobCompType=jobcomp/filetxt, read
// incrementally from a byte offset the caller keeps) or, with accounting, from sacct.
// Actions are single scontrol calls; a requeue also sets StartTime=now, because Slurm otherwise
// holds a requeued job for ~120 s (Reason=BeginTime). NOTE: a requeue truncates the job's stdout
// unless it used --open-mode=append, so callers copy the log BEFORE calling Requeue().
//
// Thread-safety: as thread-safe as the CommandRunner (the production one is).

#include <string>
#include <vector>

#include "core/result.h"
#include "slurm/command_runner.h"
#include "slurm/slurm_types.h"

namespace schedmate::slurm {

struct SlurmBackendOptions {
  std::string jobcomp_path;  // JobCompLoc of jobcomp/filetxt; "" = no jobcomp file
  bool use_sacct = false;    // read finished jobs from sacct (needs slurmdbd) instead
  Duration command_timeout = Duration::Seconds(10);
  size_t max_jobcomp_read_bytes = size_t{16} << 20;  // per ReadFinished call
};

// Where ReadFinished continues: a byte offset into the jobcomp file, or for sacct the end time
// (Unix seconds) of the newest record already seen.
struct FinishedCursor {
  int64_t offset = 0;
  int64_t skipped_lines = 0;  // malformed lines skipped so far (counted, never fatal)
};

class SlurmBackend {
 public:
  // `runner` must outlive the backend.
  SlurmBackend(CommandRunner& runner, SlurmBackendOptions options);

  // Every job slurmctld knows (pending, running and recently finished), sorted by id.
  Result<std::vector<SlurmJob>> ListJobs();
  // Every node, sorted by name.
  Result<std::vector<SlurmNode>> ListNodes();
  // scontrol's view of one job (StdOut path, Restarts, Comment...). kNotFound for unknown ids.
  Result<SlurmJob> ShowJob(const std::string& job_id);
  // The batch script slurmctld keeps for the job (until MinJobAge purges it). kNotFound if gone.
  Result<std::string> BatchScript(const std::string& job_id);
  // Finished runs recorded since `cursor`, which is advanced past complete lines only.
  // A file that shrank (rotated) is read again from its start.
  Result<std::vector<FinishedJob>> ReadFinished(FinishedCursor& cursor);

  Status SetTimeLimit(const std::string& job_id, int64_t minutes);
  Status SetComment(const std::string& job_id, const std::string& comment);
  Status DrainNode(const std::string& node, const std::string& reason);
  Status ResumeNode(const std::string& node);
  // Requeue (running or finished job) and release it at once (StartTime=now).
  Status Requeue(const std::string& job_id);
  Status Hold(const std::string& job_id);
  Status Release(const std::string& job_id);

  const SlurmBackendOptions& options() const { return options_; }

 private:
  Result<CommandOutput> RunChecked(const std::vector<std::string>& argv);
  Result<std::vector<FinishedJob>> ReadJobcomp(FinishedCursor& cursor);
  Result<std::vector<FinishedJob>> ReadSacct(FinishedCursor& cursor);

  CommandRunner& runner_;
  SlurmBackendOptions options_;
};

// True if `job_id` is a plain Slurm job id ("123" or "123_4"), safe to pass to scontrol.
bool IsValidJobId(const std::string& job_id);
// True if `node` looks like a Slurm node name (letters, digits, '-', '_', '.').
bool IsValidNodeName(const std::string& node);

}  // namespace schedmate::slurm
