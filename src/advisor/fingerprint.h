#pragma once
// JobFingerprint: the submit-time description of a job that the duration estimator compares.
//
// `workload` is a canonical text of what the job computes (model, dataset, batch size, mixed
// precision, job name, and any extracted metadata such as framework or task): jobs with equal
// workload text are "the same workload". It deliberately excludes the user and the resources,
// which the estimator keys on separately. `work` is the amount of computation per GPU
// (steps x global batch / GPUs) when the job states it, else 0; the estimator scales a
// neighbour's duration by the ratio of works when both are known.

#include <string>
#include <string_view>

#include "core/job.h"

namespace schedmate::advisor {

struct JobFingerprint {
  std::string workload;  // canonical text; "" when the job says nothing about its workload
  double work = 0;       // steps * batch / gpus, 0 when unknown
};

// From a trace or scheduler record. `extra` (may be empty) is appended to the workload text,
// e.g. metadata the advisor extracted from the job's sources ("framework=pytorch task=...").
JobFingerprint FingerprintOf(const JobRecord& job, std::string_view extra = {});

}  // namespace schedmate::advisor
