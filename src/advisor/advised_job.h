#pragma once
// A job read from its sources (`schedmate advise`), as the duration estimator sees it, and how an
// LLM's metadata answer is merged with the built-in engine's.

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "advisor/fingerprint.h"
#include "advisor/job_metadata.h"
#include "core/job.h"

namespace schedmate::advisor {

// The job's resources and workload from the extracted metadata: id "advise:<entry>", the entry
// file's name, GPUs (at most 1,000,000) and nodes (at most 100,000) when in range: more than any
// cluster has is not a request to plan with.
JobRecord JobFromMetadata(const JobMetadata& m, const std::string& user);

// The job's fingerprint: the metadata's canonical text as workload, and work = steps x batch /
// GPUs when all three are known.
JobFingerprint FingerprintOfAdvisedJob(const JobMetadata& m, const JobRecord& job);

// Which of the built-in answer's fields the LLM is asked about: all of them (no `below`, as
// under --engine llm), or only those whose built-in confidence is below `below` (--engine auto).
// `Shown()` is what the agent sees; `Merge()` takes the agent's answer and returns the final
// metadata: the fields the built-in engine was sure of keep their values, unsure ones are the
// LLM's (the built-in value stays when it gives none), and the confidences stay the built-in
// engine's for the fields it answered.
class MetadataMerge {
 public:
  MetadataMerge(const JobMetadata& builtin, std::optional<double> below);
  const JobMetadata& Shown() const { return shown_; }
  JobMetadata Merge(JobMetadata llm_answer) const;

 private:
  JobMetadata builtin_;
  JobMetadata shown_;
  std::map<std::string, std::pair<nlohmann::json, std::string>> sure_, unsure_;
};

}  // namespace schedmate::advisor
