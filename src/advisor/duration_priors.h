#pragma once
// DurationPriors: what a training job's own description implies about its run time, for the
// estimator's cold start (no finished job like it). The numbers are knowledge, not code: public
// measurements and stated assumptions in config/duration_priors.yaml (compiled in; its comments
// give the sources and the model). EstimateFromSemantics turns a job's steps or epochs, batch,
// model family or parameter count, data set, precision, GPU type and GPU count into seconds and
// says which assumptions it made.
//
// Thread-safety: immutable after construction; Builtin() is shared.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "advisor/fingerprint.h"
#include "core/result.h"

namespace schedmate::advisor {

struct GpuPrior {
  double tflops = 0;  // peak dense fp16/bf16 tensor TFLOPS
  double speed = 0;   // measured training speed relative to the reference GPU; 0: from tflops
};

struct FamilyPrior {
  std::string name;
  bool transformer = false;
  double gflops = 0;  // vision: forward GFLOPs per 224-px sample
  double params = 0;  // transformer: default parameter count
  int64_t seq = 0;    // transformer: default tokens per sample
  int64_t batch = 0;  // default per-GPU batch
};

struct DurationPriors {
  std::string reference_gpu;
  double reference_samples_per_s = 0, reference_gflops = 0;
  double fp32_factor = 0, scaling_efficiency = 0, mfu = 0, max_samples_per_s = 0;
  double startup_s = 0, bandwidth = 0;
  std::map<std::string, GpuPrior> gpus;
  std::vector<FamilyPrior> families;                      // ordered
  std::vector<std::pair<std::string, int64_t>> datasets;  // ordered, normalised names

  // Parses the YAML; errors name `source`:line.
  static Result<DurationPriors> Parse(std::string_view yaml, std::string_view source);
  // config/duration_priors.yaml as compiled in.
  static const DurationPriors& Builtin();
};

struct SemanticEstimate {
  double seconds = 0;
  std::string explanation;  // the computation and every assumption it made
};

// nullopt when the job states neither steps nor epochs, or nothing about its model that a rate
// can be derived from (no family, no parameter count), or epochs without a known data set size.
// `gpus` <= 0 counts as 1.
std::optional<SemanticEstimate> EstimateFromSemantics(const DurationPriors& priors,
                                                      const JobSemantics& s, double gpus);

}  // namespace schedmate::advisor
