#pragma once
// ColocationModel: how fast two jobs run when they share the same GPUs, relative to running alone.
//
// Built from Lucid's measurements (lucid_aux/colocate_info.csv: one row per measured pair of
// workloads with each one's normalised speed; single_data.csv: each workload alone, with Lucid's
// sharing score `label` 0..2) or, without files, from a utilisation model only.
//
// Lookup of a pair (a, b): the measured row for (a, b) or (b, a), keyed by model, dataset,
// batch size and amp. A pair not measured falls back to the utilisation model: if the two jobs'
// GPU utilisations sum to at most 100 % both run at full speed, otherwise each runs at
// 100 / (util_a + util_b) (the GPU's cycles are split in proportion). Jobs with no utilisation
// known count as 100 %.
// Thread-safety: immutable after construction; safe to share.

#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "core/job.h"
#include "core/result.h"

namespace schedmate::policy {

struct PairRates {
  double a = 1.0;  // rate of the first job (1 = as fast as alone)
  double b = 1.0;
  bool measured = false;  // from the measurement table, not the fallback model
};

class ColocationModel {
 public:
  ColocationModel() = default;
  // Reads both CSVs. Errors name the file and line.
  static Result<ColocationModel> Load(const std::string& colocate_info_csv,
                                      const std::string& single_data_csv);

  PairRates Rates(const JobRecord& a, const JobRecord& b) const;
  // Lucid's sharing score for the job's workload: 0 shares well .. 2 should not share.
  // Unknown workloads: 1 when utilisation is known and <= 50 %, else 2.
  int ShareScore(const JobRecord& job) const;
  bool has_measurements() const { return !pairs_.empty(); }
  size_t measured_pairs() const { return pairs_.size(); }

 private:
  using Key = std::tuple<std::string, std::string, int32_t, int32_t>;  // model, dataset, bs, amp
  static Key KeyOf(const JobRecord& j) { return {j.model, j.dataset, j.batch_size, j.amp}; }
  std::map<std::pair<Key, Key>, std::pair<double, double>> pairs_;
  std::map<Key, int> labels_;
};

}  // namespace schedmate::policy
