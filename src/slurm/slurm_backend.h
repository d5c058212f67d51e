#pragma once
// SlurmBackend: reads a live Slurm cluster's queue, nodes and finished jobs and acts on it, all
// through Slurm's own command-line tools run by a CommandRunner (squeue/sinfo --json, scontrol,
// sacct). It holds no cluster state of its own: every call asks Slurm.
//
// Finished jobs come from the jobcomp/filetxt file (JobCompType=jobcomp/filetxt, read
// incrementally from a byte offset the caller keeps) or, with accounting, from sacct.
// Actions are scontrol calls. A requeue always sets StartTime (now + the caller's delay), because
// Slurm otherwise holds a requeued job for ~120 s (Reason=BeginTime); nodes the retry must avoid
// are added to its ExcNodeList before that release, so the job can never start on them. Slurm
// 22.05 cannot change a job's environment or command (`scontrol update` rejects Environment=),
// so a resume checkpoint can only be told through the job's Comment, which a job script may read
// with `squeue -h -j $SLURM_JOB_ID -o %k`. NOTE: a requeue truncates the job's stdout unless it
// used --open-mode=append, so callers copy the log BEFORE calling Requeue().
//
// Thread-safety: as thread-safe as the CommandRunner (the production one is).

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "slurm/assoc.h"
#include "slurm/command_runner.h"
#include "slurm/job_usage.h"
#include "slurm/qos.h"
#include "slurm/slurm_types.h"

namespace schedmate::slurm {

struct SlurmBackendOptions {
  std::string jobcomp_path;  // JobCompLoc of jobcomp/filetxt; "" = no jobcomp file
  bool use_sacct = false;    // read finished jobs from sacct (needs slurmdbd) instead
  Duration command_timeout = Duration::Seconds(10);
  size_t max_jobcomp_read_bytes = size_t{16} << 20;  // per ReadFinished call
};

struct RequeueOptions {
  Duration delay = Duration::Zero();       // released at now + delay (whole seconds, rounded up)
  std::vector<std::string> exclude_nodes;  // added to the job's ExcNodeList (never removes any)
  std::string comment;  // "" = keep the Comment; else replaces schedmate's part of it
};

// What an action did beyond its main step. The main step (requeue, hold) failing is an error;
// a later step failing (exclusion, release time, comment) is a warning: the job was requeued.
struct ActionReport {
  bool already_pending = false;       // Slurm had requeued the job itself: only updated
  std::vector<std::string> excluded;  // the job's ExcNodeList after the update, sorted
  std::vector<std::string> warnings;  // failed later steps, for the action log
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
  // Requeues a running or finished job (a job Slurm already requeued and that is pending is
  // only updated), then: ExcNodeList += exclude_nodes (except nodes the job requires by name,
  // ReqNodeList: a warning instead); Comment; StartTime=now+delay (last, so the job is never
  // eligible before its exclusions are in place).
  Result<ActionReport> Requeue(const std::string& job_id, const RequeueOptions& options = {});
  // Keeps a job from running until a person releases it: a finished job is requeued held
  // (`scontrol requeuehold`, Reason=job_requeued_in_held_state), a pending one held. `comment`
  // ("" = none) replaces schedmate's part of the job's Comment so `squeue` shows why.
  Result<ActionReport> HoldForReview(const std::string& job_id, const std::string& comment);
  // Makes a pending job eligible at once (StartTime=now). After a delayed requeue, Slurm starts
  // the job only at its next scheduling cycle once the delay has passed (sched_interval /
  // bf_interval: up to a minute); an update makes slurmctld schedule it at once.
  Status StartNow(const std::string& job_id);
  // Sets a pending job's priority (higher runs first). Slurm then treats it as fixed (admin
  // set): priority/multifactor stops recomputing it until the job is held and released.
  // REQUIRES: 1 <= priority <= 4294967293 (0 would hold the job).
  Status SetPriority(const std::string& job_id, int64_t priority);
  // slurm.conf's PriorityType ("priority/basic", "priority/multifactor"), from
  // `scontrol show config`.
  Result<std::string> PriorityType();
  // Ids of the pending jobs whose priority priority/multifactor computes (`sprio`): a pending
  // job missing from it has a priority someone set. Only meaningful under multifactor.
  Result<std::vector<std::string>> ComputedPriorityJobs();
  // Every QOS with its limits (`sacctmgr show qos`; needs slurmdbd).
  Result<std::vector<QosLimits>> ListQos();
  // The associations of this cluster (ClusterName from `scontrol show config`) with their
  // limits (`sacctmgr show assoc`; needs slurmdbd).
  Result<std::vector<AssocLimits>> ListAssociations();
  // What the job's steps use now (`sstat --allsteps`; needs JobAcctGatherType other than none).
  Result<std::vector<StepUsage>> JobStepUsage(const std::string& job_id);
  // Node -> GPU indices the job holds there (`scontrol show job -d`).
  Result<std::map<std::string, std::vector<int>>> JobGpuIndices(const std::string& job_id);
  // Runs `argv` inside the running job's allocation on `node`, beside its own steps
  // (`srun --jobid=J --overlap -N1 -n1 -w NODE --quiet`). The command's exit status is in the
  // output, not an error; errors are srun failing to run at all (kUnavailable/kDeadlineExceeded).
  Result<CommandOutput> RunInJob(const std::string& job_id, const std::string& node,
                                 const std::vector<std::string>& argv, Duration timeout);
  Status Hold(const std::string& job_id);
  Status Release(const std::string& job_id);

  const SlurmBackendOptions& options() const { return options_; }

 private:
  Result<CommandOutput> RunChecked(const std::vector<std::string>& argv);
  // A `scontrol show config` value ("PriorityType"); kNotFound when it is not listed.
  Result<std::string> ConfigValue(std::string_view key);
  Result<std::vector<FinishedJob>> ReadJobcomp(FinishedCursor& cursor);
  Result<std::vector<FinishedJob>> ReadSacct(FinishedCursor& cursor);

  CommandRunner& runner_;
  SlurmBackendOptions options_;
};

// `existing` Comment with schedmate's parts (" | "-separated parts starting "schedmate")
// replaced by `ours` ("" drops them); other parts, e.g. the user's --comment, are kept in order.
// At most 500 characters; quotes and control characters become spaces.
std::string MergeSchedmateComment(std::string_view existing, std::string_view ours);

// "now" for zero, else "now+<seconds>" rounded up: scontrol's relative StartTime.
std::string RelativeStartTime(Duration delay);

// True if `job_id` is a plain Slurm job id ("123" or "123_4"), safe to pass to scontrol.
bool IsValidJobId(const std::string& job_id);
// True if `node` looks like a Slurm node name (letters, digits, '-', '_', '.').
bool IsValidNodeName(const std::string& node);

}  // namespace schedmate::slurm
