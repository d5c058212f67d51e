#pragma once
// Parsers for the text Slurm 22.05's tools print. Pure functions over strings: no I/O, so the
// unit tests feed them outputs captured from a real cluster (tests/data/slurm/).
//
// Quirks handled here (see docs/SLURM.md): squeue's exit_code is a raw wait status (768 = exit 3);
// squeue's standard_output is the unexpanded pattern (use scontrol's StdOut); scontrol has no JSON
// and values may contain spaces; the jobcomp file also logs a PENDING line when a job is requeued.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "slurm/slurm_types.h"

namespace schedmate::slurm {

// `squeue --json` (openapi v0.0.38). kDataLoss when the text is not that JSON; jobs sorted by id.
// Node lists expand within kMaxExpandedNodesPerOutput names in all.
Result<std::vector<SlurmJob>> ParseSqueueJson(std::string_view text);
// `sinfo --json`. kDataLoss when malformed; nodes sorted by name.
Result<std::vector<SlurmNode>> ParseSinfoJson(std::string_view text);

// One `Key=Value Key=Value ...` line (scontrol -o, jobcomp/filetxt). A word without '=' (or whose
// would-be key is not an identifier) continues the previous value, so "Comment=a b" keeps "a b".
// Keys keep their first occurrence; order is preserved.
std::vector<std::pair<std::string, std::string>> ParseKeyValueLine(std::string_view line);
// `scontrol show job -d -o [ID]`: one map per job line.
std::vector<std::map<std::string, std::string>> ParseScontrolRecords(std::string_view text);
// Fills the SlurmJob fields scontrol knows (StdOut, StdErr, Restarts, Comment, ...) from one
// record.
Status ApplyScontrolJob(const std::map<std::string, std::string>& record, SlurmJob& job);
// A SlurmJob built from one scontrol record alone.
Result<SlurmJob> SlurmJobFromScontrol(const std::map<std::string, std::string>& record);

// One jobcomp/filetxt line. nullopt for lines that are not a finished run (the PENDING line a
// requeue writes); kDataLoss when required keys are missing.
Result<std::optional<FinishedJob>> ParseJobcompLine(std::string_view line);
// `sacct -X -n -P -o
// JobID,JobName,User,Partition,State,ExitCode,NodeList,Submit,Start,End,Timelimit,WorkDir` output
// (the order kSacctFormat names). Unfinished jobs are skipped; a line with fewer fields or an
// empty JobID is kDataLoss naming the line. Node lists expand within kMaxExpandedNodesPerOutput.
inline constexpr const char* kSacctFormat =
    "JobID,JobName,User,Partition,State,ExitCode,NodeList,Submit,Start,End,Timelimit,WorkDir";
Result<std::vector<FinishedJob>> ParseSacctParsable(std::string_view text);

// Bounds on what the parsers return, whatever the text says: GPU counts saturate at
// kMaxGpuCount; a node list expands to at most kMaxExpandedNodes names; time limits above
// kMaxTimeLimitMinutes (Slurm's NO_VAL 4294967294 and INFINITE 4294967295 included) are "none".
inline constexpr int32_t kMaxGpuCount = 1 << 20;
inline constexpr size_t kMaxExpandedNodes = 100000;
// What one squeue or sacct output expands to in all (its jobs' node lists together): past it,
// lists keep their text (node_list) and expand to nothing, so a few kilobytes of output cannot
// become gigabytes of names.
inline constexpr size_t kMaxExpandedNodesPerOutput = 1000000;
inline constexpr int64_t kMaxTimeLimitMinutes = 4294967293;
// Epoch seconds after 9999-12-31 are treated as "not set" (they would overflow SimTime).
inline constexpr int64_t kMaxEpochSeconds = 253402300799;

// "gpu[1-3,7],cpu01" -> gpu1 gpu2 gpu3 gpu7 cpu01 (zero padding kept). "" and "(null)" -> {}.
// A range that would take the list past `max_names` names is kept as written.
std::vector<std::string> ExpandNodeList(std::string_view list,
                                        size_t max_names = kMaxExpandedNodes);
// GPU count in a TRES/GRES string: "gres:gpu:4", "gres/gpu=2", "gpu:a100:2", "gres:gpu" (1).
// 0 when no GPU is named; at most kMaxGpuCount.
int32_t ParseGpuCount(std::string_view tres);
// A job's total GPUs: `per_job` when positive, else per_node x max(1, nodes); in 0..kMaxGpuCount.
int32_t TotalGpus(int32_t per_job, int32_t per_node, int32_t nodes);
// "2026-11-22T00:32:34" in the local time zone (Slurm prints local time). nullopt for
// "Unknown", "None", "N/A", "" or garbage.
std::optional<SimTime> ParseSlurmTimestamp(std::string_view text);
// "00:05:00", "1-02:00:00", "45:00" (min:sec), "5" (minutes) -> minutes (rounded up); nullopt for
// "UNLIMITED", "Partition_Limit", "N/A", garbage and limits above kMaxTimeLimitMinutes.
std::optional<int64_t> ParseTimeLimitMinutes(std::string_view text);
// "3:0" -> {3, 0}; "0:9" -> {0, 9}.
std::pair<int32_t, int32_t> ParseExitCodePair(std::string_view text);
// A raw wait status (squeue's exit_code) -> {exit code, signal}.
std::pair<int32_t, int32_t> DecodeWaitStatus(int64_t raw);
// "RUNNING", "PENDING", ... : true for states after which the job no longer runs.
bool IsFinishedState(std::string_view state);
// Base state without flags or suffixes: "CANCELLED by 0" -> "CANCELLED", "FAILED+" -> "FAILED".
std::string NormalizeState(std::string_view state);

}  // namespace schedmate::slurm
