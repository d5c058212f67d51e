#pragma once
// Value types for what schedmate reads from Slurm: jobs in the queue, nodes, finished job records.
// Times are absolute (Unix epoch microseconds, as SimTime); absent values are std::nullopt.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/sim_time.h"

namespace schedmate::slurm {

// A job as squeue/scontrol shows it. `id` is the job id as text ("123"; array tasks "123_4").
struct SlurmJob {
  std::string id;
  std::string name;
  std::string user;
  std::string partition;
  std::string state;   // Slurm's base state: PENDING, RUNNING, COMPLETED, FAILED, ...
  std::string reason;  // state_reason: "None", "Priority", "Resources", "BeginTime", ...
  int64_t priority = 0;
  int64_t nice = 0;           // the user's --nice (0 when none)
  int32_t nodes = 0;          // node count (requested for pending jobs, allocated for running)
  int32_t gpus_per_node = 0;  // from tres_per_node "gres:gpu:4" (0 when the job asks for none)
  int32_t gpus = 0;           // total GPUs: gpus_per_node * nodes, or tres_per_job's count
  int32_t cpus = 0;           // CPUs (allocated once running, else requested)
  std::optional<int64_t> memory_mib;  // memory allocated (TRES mem=), all nodes; nullopt when
                                      // Slurm does not track memory (SelectTypeParameters=CR_Core)
  std::string node_list;              // allocated nodes, compressed ("gpu[1-2]"); "" when pending
  std::vector<std::string> node_names;  // node_list expanded
  SimTime submit;
  std::optional<SimTime> start;           // set once the job started
  std::optional<SimTime> expected_start;  // pending jobs: Slurm's backfill guess, when it has one
  std::optional<SimTime> eligible;  // pending jobs: not before this (BeginTime, requeue delay)
  std::optional<SimTime> end;       // set once it ended
  std::optional<int64_t> time_limit_min;  // nullopt = UNLIMITED / not set
  int32_t exit_code = 0;                  // decoded exit status (squeue reports a raw wait status)
  int32_t exit_signal = 0;                // terminating signal, 0 when none
  int32_t restarts = 0;
  std::vector<std::string> excluded_nodes;  // ExcNodeList expanded ("" / (null) -> none)
  std::vector<std::string> required_nodes;  // ReqNodeList (sbatch -w) expanded
  std::string comment;
  std::string account;
  std::string qos;
  std::string dependency;  // "afterok:12(unfulfilled),afterany:13" as squeue shows it; "" = none
  std::string command;     // the batch script path at submission
  std::string work_dir;
  std::string std_out;  // may still be an unexpanded pattern in squeue output (%x-%j.out)
  std::string std_err;
};

// A node as sinfo shows it.
struct SlurmNode {
  std::string name;
  std::string state;               // base state: idle, mixed, allocated, down, ...
  std::vector<std::string> flags;  // DRAIN, NOT_RESPONDING, ...
  int32_t gpus_total = 0;
  int32_t gpus_used = 0;
  int32_t cpus = 0;
  std::string reason;  // drain/down reason, "" when none
  std::vector<std::string> partitions;
  bool drained() const;    // DRAIN flag or state drained/draining
  bool available() const;  // accepts new jobs: not drained, not down
};

// One finished run of a job, from the jobcomp file or sacct. Requeued jobs produce one record per
// run; (id, start, end) identifies a run.
struct FinishedJob {
  std::string id;
  std::string name;
  std::string user;
  std::string partition;
  std::string state;  // COMPLETED, FAILED, TIMEOUT, NODE_FAIL, CANCELLED, OUT_OF_MEMORY, ...
  int32_t exit_code = 0;
  int32_t exit_signal = 0;
  std::string node_list;
  std::vector<std::string> node_names;
  SimTime submit;
  SimTime start;
  SimTime end;
  std::optional<int64_t> time_limit_min;
  std::string work_dir;
  std::string RunKey() const;  // "<id>@<start seconds>"
};

}  // namespace schedmate::slurm
