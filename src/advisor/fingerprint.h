#pragma once
// JobFingerprint: the submit-time description of a job that the duration estimator compares.
//
// `workload` is a canonical text of what the job computes (model, dataset, batch size, mixed
// precision, job name, and any extracted metadata such as framework or task): jobs with equal
// workload text are "the same workload". It deliberately excludes the user and the resources,
// which the estimator keys on separately. `work` is the amount of computation per GPU
// (steps x global batch / GPUs) when the job states it, else 0; the estimator scales a
// neighbour's duration by the ratio of works when both are known. `semantics` holds the
// structured values a cold start computes a run time from (duration_priors.h).

#include <cstdint>
#include <string>
#include <string_view>

#include "core/job.h"

namespace schedmate::advisor {

struct JobMetadata;

// What the job says about its amount of training; 0 / "" = unknown.
struct JobSemantics {
  std::string model, model_family, dataset, precision, gpu_type;  // lower case
  int64_t max_steps = 0;
  double epochs = 0;
  int64_t global_batch = 0, per_device_batch = 0;
  int64_t sequence_length = 0, image_size = 0;
  double params = 0;  // parameter count
  bool empty() const { return max_steps <= 0 && epochs <= 0; }
};

struct JobFingerprint {
  std::string workload;  // canonical text; "" when the job says nothing about its workload
  double work = 0;       // steps * batch / gpus, 0 when unknown
  JobSemantics semantics;
};

// From a trace or scheduler record. `extra` (may be empty) is appended to the workload text,
// e.g. metadata the advisor extracted from the job's sources ("framework=pytorch task=...");
// its `key=value` words for model_family, precision, gpu_type, per_device_batch_size,
// sequence_length, image_size, epochs, max_steps and params also fill `semantics`.
JobFingerprint FingerprintOf(const JobRecord& job, std::string_view extra = {});

// FingerprintOf(job) without `semantics` (left empty): what an observation of a finished job
// learns from.
JobFingerprint WorkloadFingerprintOf(const JobRecord& job);

// From extracted metadata: the workload text is meta.FingerprintText(); semantics take every
// field the metadata has (epochs and params included), the job's fields where it has none.
JobFingerprint FingerprintOf(const JobRecord& job, const JobMetadata& meta);

// Parses a parameter count: 7e9, 7000000000, "7B", "~340M", "1.5b", "125m (derived)"; 0 when
// it is none.
double ParseParamCount(std::string_view text);

}  // namespace schedmate::advisor
