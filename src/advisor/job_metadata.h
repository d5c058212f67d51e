#pragma once
// JobMetadata: what a job is, as extracted from its sources, with where each value came from.
//
// Fields (kMetadataFields, the JSON names of `schedmate advise --json`): framework, task, model,
// model_family, params, dataset, per_device_batch_size, global_batch_size, gradient_accumulation,
// sequence_length, image_size, epochs, max_steps, learning_rate, optimizer, precision, num_gpus,
// num_nodes, launcher. A value is JSON: a number, a string (a string for numbers means the value
// is dynamic or derived and says so), or absent (unknown: printed as null). `sources[field]` is
// "file:line" (path relative to the job's root), "derived: ..." or "default: ...".

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/job.h"

namespace schedmate::advisor {

// clang-format off
inline constexpr std::array<std::string_view, 19> kMetadataFields = {
    "framework", "task", "model", "model_family",
    "params", "dataset", "per_device_batch_size", "global_batch_size",
    "gradient_accumulation", "sequence_length", "image_size", "epochs",
    "max_steps", "learning_rate", "optimizer", "precision",
    "num_gpus", "num_nodes", "launcher"};
// clang-format on

struct JobMetadata {
  std::map<std::string, nlohmann::json> values;  // only known fields
  std::map<std::string, std::string> sources;    // field -> provenance
  // field -> how sure the engine that answered is (0..1); see BuiltinMetadataExtractor for the
  // built-in engine's scale. Fields the LLM supplied have none.
  std::map<std::string, double> confidence;
  std::string entry;                    // the entry file, relative to root
  std::vector<std::string> files_read;  // relative paths, in reading order
  int files_skipped = 0;                // non-UTF-8 / binary / unreadable files
  std::vector<std::string> notes;       // human-readable remarks (e.g. guesses)

  bool Has(std::string_view field) const { return values.count(std::string(field)) != 0; }
  // The field's value when it is a number / a string (a derived text like "derived: 8 x
  // num_processes" is a string, not a number); nullopt / "" otherwise.
  std::optional<double> Number(std::string_view field) const;
  // The field as a whole count in [0, max] (rounded); nullopt when absent, not finite or out of
  // range: extracted numbers come from job sources anyone can write ("--max_steps 1e30").
  std::optional<int64_t> Count(std::string_view field, int64_t max) const;
  std::string Text(std::string_view field) const;
  // Fills the workload fields the estimator's fingerprint and work scaling use (global batch,
  // steps, model, dataset, mixed precision) from the extracted values that are in range; the
  // job's resources stay as the caller set them.
  void ApplyWorkloadTo(JobRecord& job) const;
  // {"field": value-or-null, ...} over kMetadataFields, in that order.
  nlohmann::json FieldsJson() const;
  nlohmann::json SourcesJson() const;
  // {"field": confidence, ...} for the known fields that have one, in kMetadataFields order.
  nlohmann::json ConfidenceJson() const;
  // {"field": "builtin" | "llm", ...} for the known fields: which engine answered each.
  nlohmann::json EnginesJson() const;
  // The confidence of the answer as a whole, for deciding whether to ask an LLM: the lowest
  // confidence among the fields the duration estimate rests on (model, dataset, batch, steps or
  // epochs, GPUs), and at most 0.4 when the batch or the amount of training is unknown.
  double AnswerConfidence() const;
  // A one-line canonical text of the known fields, for fingerprints ("framework=pytorch ...").
  std::string FingerprintText() const;
};

}  // namespace schedmate::advisor
