#pragma once
// `schedmate tune`: a grid search over Slurm settings (priority weights, backfill parameters) on
// the early part of a history, validated on the rest. The search can run in one process or in
// chunks (array tasks of `tune --via-slurm`, one chunk each); both give the same scores, and the
// recommendation comes from the merged scores by one rule, so the same input gives the same
// recommendation however the sweep was split.
//
// Candidates: the grid's cartesian product, numbered 0..candidates-1 with the LAST axis varying
// fastest; each is the site's SlurmConfig with the candidate's settings applied. Every run is the
// `slurm` policy, seed 1 (the slurm policy draws nothing at random). Recommendation: the candidate
// with the lowest objective on the training jobs, if strictly lower than the site's own setting;
// ties keep the site's setting, then the lower index.
//
// Chunk K of N (0-based) holds candidates [K*C/N, (K+1)*C/N) (C candidates, integer division):
// contiguous, disjoint, covering, sizes differing by at most one.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/job.h"
#include "core/result.h"
#include "policy/slurm_config.h"
#include "sim/whatif.h"

namespace schedmate::sim {

enum class TuneObjective { kAvgQueue, kP95Queue, kAvgJct };
// "avg_queue_s", "p95_queue_s", "avg_jct_s".
std::string_view TuneObjectiveName(TuneObjective o);
std::optional<TuneObjective> ParseTuneObjective(std::string_view name);
double ObjectiveValue(const WhatIfMetrics& m, TuneObjective o);

struct TuneAxis {
  std::string key;
  std::vector<std::string> values;
};

struct TuneGrid {
  std::vector<TuneAxis> axes;
  size_t candidates = 1;
  // Candidate i's settings in axis order. REQUIRES: i < candidates.
  std::vector<std::pair<std::string, std::string>> Settings(size_t i) const;
  // `site` with candidate i's settings applied. REQUIRES: i < candidates.
  policy::SlurmConfig Apply(const policy::SlurmConfig& site, size_t i) const;
  // "KEY=v1,v2" per axis, the grid as the workers are told it.
  std::vector<std::string> Specs() const;
};

constexpr size_t kMaxTuneCandidates = 1000;
// Slurm's weights and backfill window around typical values.
const std::vector<std::string>& DefaultTuneGrid();
// Parses "KEY=v1,v2,..." specs (empty: the default grid). kInvalidArgument naming the spec when a
// key or value is refused by policy::ApplySlurmSetting, an axis has no values, or the product
// exceeds kMaxTuneCandidates.
Result<TuneGrid> ParseTuneGrid(const std::vector<std::string>& specs);

// Everything a candidate is scored on. The history is split by submit time at
// first + train_fraction x (last - first): earlier jobs train, the rest validate (file order kept).
struct TuneProblem {
  policy::SlurmConfig site;
  ClusterSpec cluster;
  TuneGrid grid;
  TuneObjective objective = TuneObjective::kAvgQueue;
  SimTime cut;
  JobTable train, validation;
};
// kInvalidArgument naming `source` when either part has fewer than 2 jobs.
Status SplitForTuning(const JobTable& history, double train_fraction, std::string_view source,
                      TuneProblem& problem);

// Metrics of the slurm policy on `jobs` under `config` (seed 1). Errors: the simulator's, with
// `label` in front.
Result<WhatIfMetrics> SimulateSlurmPolicy(const JobTable& jobs, const ClusterSpec& cluster,
                                          const policy::SlurmConfig& config,
                                          std::string_view label);

struct CandidateScore {
  size_t index = 0;
  double objective = 0;  // on the training jobs
  bool operator==(const CandidateScore&) const = default;
};

// Scores candidates [begin, end) on the training jobs, in index order, on up to `threads` threads
// (the result does not depend on it). REQUIRES: begin <= end <= grid.candidates.
Result<std::vector<CandidateScore>> ScoreCandidates(const TuneProblem& problem, size_t begin,
                                                    size_t end, int32_t threads = 1);

struct CandidateRange {
  size_t begin = 0, end = 0;
};
// Chunk `chunk` of `chunks` (see the file comment). REQUIRES: 0 <= chunk < chunks.
CandidateRange TuneChunk(size_t candidates, int32_t chunk, int32_t chunks);

// A worker's result file: what it scored and what it was told (grid, split, objective, sizes),
// so the parent refuses a file from a different problem.
nlohmann::json TuneChunkToJson(const TuneProblem& problem, int32_t chunk, int32_t chunks,
                               const std::vector<CandidateScore>& scores);
// Reads and checks chunk `chunk`'s file. kNotFound when it is missing; kDataLoss naming the file
// when it is malformed, from another problem or chunking, or lacks a candidate of its range.
Result<std::vector<CandidateScore>> ReadTuneChunk(const std::string& path,
                                                  const TuneProblem& problem, int32_t chunk,
                                                  int32_t chunks);

// The recommendation from every candidate's score (REQUIRES: all candidates, index order) plus
// the validation runs, as `tune --json` prints it: recommended, baseline, predicted, validation,
// slurm_conf_lines, notes.
Result<nlohmann::json> FinishTune(const TuneProblem& problem,
                                  const std::vector<CandidateScore>& scores,
                                  const std::vector<std::string>& notes);

}  // namespace schedmate::sim
