#pragma once
// SignalAnalyzer: derived signals over a job's progress records: progress fraction, an ETA when
// the log prints none, throughput trend, slowdown against the job's own baseline, stalls (no
// progress for k x the usual interval) and loss divergence (NaN/inf or explosion).
//
// Rationale: every threshold is relative to the job itself (its first records form the
// baseline, its median record interval defines "usual"), so one configuration serves jobs of any
// speed. Timestamps come from the log lines or, in follow mode, from the wall clock (core/clock.h).
// Deterministic. Not thread-safe.

#include <deque>
#include <optional>
#include <vector>

#include "tracker/progress_record.h"

namespace schedmate::tracker {

struct SignalOptions {
  double stall_factor = 5.0;       // stalled after this many usual intervals without progress
  double min_stall_s = 60.0;       // ... and at least this long
  double slowdown_share = 0.2;     // slowdown when step time rises by this share over baseline
  int baseline_records = 20;       // first records of a run (with timing) form the baseline
  int recent_records = 10;         // the latest records compared against it
  double explosion_factor = 10.0;  // loss above this x the run's minimum (after warm-up)
  int warmup_records = 5;
};

struct Signals {
  std::optional<double> progress;  // 0..1 of the run
  std::optional<double> eta_s;     // printed, else derived from step time
  bool eta_derived = false;
  std::optional<double> baseline_step_time_s;
  std::optional<double> recent_step_time_s;
  std::optional<double> throughput_trend;  // (recent - baseline) / baseline of steps per second
  bool slowdown = false;
  std::optional<double> usual_interval_s;  // median time between records
  std::optional<double> since_last_progress_s;
  bool stalled = false;
  bool loss_nan = false;        // latest loss is NaN or infinite
  bool loss_exploding = false;  // latest loss > explosion_factor x minimum
  std::optional<double> min_loss;
  int records = 0;
  int restarts = 0;
};

class SignalAnalyzer {
 public:
  explicit SignalAnalyzer(SignalOptions options = {}) : options_(options) {}
  // Adds the next record (in log order).
  void Add(const ProgressRecord& r);
  // Signals for `latest` judged at time `now_s` (seconds, same clock as record timestamps;
  // < 0 when unknown: no stall judgement).
  Signals Compute(const ProgressRecord& latest, double now_s) const;

 private:
  SignalOptions options_;
  int run_ = -1;
  int records_ = 0;
  int restarts_ = 0;
  int run_records_ = 0;
  std::vector<double> baseline_times_;
  std::deque<double> recent_times_;
  std::deque<double> intervals_;
  double last_ts_ = -1;
  std::optional<double> min_loss_;
  std::optional<double> min_epoch_;
};

}  // namespace schedmate::tracker
