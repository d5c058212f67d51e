#pragma once
// "Why is my job not starting?" — ExplainJob answers from one consistent ServiceView (the live
// queue, nodes, predictions, tracker metrics and start estimates), with no Slurm calls:
//
//   reason      Slurm's pending reason in plain words (pending_reasons.h), shown as is when unknown
//   evidence    what the answer rests on, as fields: the GPUs free in the job's partition now
//               ("free_gpus"), the jobs ahead of it ("job_ahead", by priority, with their start
//               estimates), the running jobs whose end frees GPUs ("running_job", expected end
//               from the tracker's ETA, else the advisor's prediction, else the time limit;
//               "source" says which), when enough GPUs are free for it ("gpus_free_at"), the jobs
//               it depends on ("dependency"), its earliest start ("begin_time"), the limit named
//               by the reason ("limit") and, for QOS and association limits, its value from
//               sacctmgr ("limit_value": name "QOS q MaxTRESPU" or "Assoc acct/user GrpTRES",
//               value 3; an association limit is the nearest one set on the job's user
//               association or its accounts up to root) and, for an association's GPU Grp
//               limits, what running jobs under it hold ("limit_used": GPUs, or GPU-minutes
//               of time limit left for GrpTRESRunMins)
//   suggestions changes that would let it start sooner, each with the expected start and why:
//               a smaller GPU request that fits on the GPUs free now ("--gres=gpu:K") or within
//               the QOS or association GPU limit the job waits on (what the limit leaves), a
//               time limit within an association's GrpTRESRunMins ("--time=M"), another
//               partition with room now ("--partition=Q"), a time limit short enough for
//               backfill to place it before the reservation of the first job ahead
//               ("--time=M", applicable to the pending job with `scontrol update`), releasing a
//               user hold. None is offered when nothing is known to help.
//
// Deterministic: jobs ahead by priority desc, submit, id; running jobs by expected end, id;
// partitions by name.

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/sim_time.h"
#include "service/companion.h"
#include "service/pending_reasons.h"

namespace schedmate::service {

struct WhyEvidence {
  std::string kind;  // free_gpus | job_ahead | running_job | gpus_free_at | dependency | ...
  std::string text;  // one line for people
  std::string job_id;
  std::string node;
  std::string partition;
  std::string name;              // limit_value: "QOS gpu2 MaxTRESPU"
  std::optional<SimTime> at;     // a start estimate, an expected end, a free-at time
  std::optional<int64_t> value;  // GPUs, a priority, a count, a limit's value
  std::string source;            // tracker | advisor | time_limit | slurm | schedmate
};

struct WhySuggestion {
  std::string change;  // "--gres=gpu:4", "--partition=debug", "--time=25", "scontrol release 42"
  std::optional<SimTime> expected_start;
  std::string why;
};

struct WhyAnswer {
  std::string job_id;
  std::string state;
  std::string reason_code;  // as Slurm gives it ("" for a job that is not pending)
  std::string reason_kind;  // ReasonKindName()
  bool reason_known = false;
  std::string explanation;
  std::vector<WhyEvidence> evidence;
  std::optional<SimTime> expected_start;
  std::vector<WhySuggestion> suggestions;
};

struct WhyOptions {
  int max_listed = 5;                               // jobs ahead / running jobs listed
  Duration backfill_margin = Duration::Minutes(1);  // kept free before a reservation
};

// kNotFound when the view has no such job.
Result<WhyAnswer> ExplainJob(const ServiceView& view, const std::string& job_id, SimTime now,
                             const ReasonCatalogue& reasons = ReasonCatalogue::Builtin(),
                             const WhyOptions& options = {});

// {"job_id", "state", "reason_code", "reason_kind", "reason_known", "explanation",
//  "evidence": [...], "expected_start", "suggestions": [{"change", "expected_start", "why"}]};
// times are Unix seconds (as in the rest of the API), null when unknown.
nlohmann::json WhyAnswerToJson(const WhyAnswer& a);

}  // namespace schedmate::service
