#include "tracker/signals.h"

#include <algorithm>
#include <cmath>

namespace schedmate::tracker {
namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

void SignalAnalyzer::Add(const ProgressRecord& r) {
  ++records_;
  if (r.run != run_) {
    if (run_ >= 0) ++restarts_;
    run_ = r.run;
    run_records_ = 0;
    baseline_times_.clear();
    recent_times_.clear();
    intervals_.clear();
    min_loss_.reset();
    min_epoch_.reset();
  }
  ++run_records_;
  std::optional<double> t = r.v.step_time_s;
  if (t && std::isfinite(*t) && *t > 0) {
    if (static_cast<int>(baseline_times_.size()) < options_.baseline_records) {
      baseline_times_.push_back(*t);
    }
    recent_times_.push_back(*t);
    while (static_cast<int>(recent_times_.size()) > options_.recent_records)
      recent_times_.pop_front();
  }
  if (r.timestamp_s >= 0) {
    if (last_ts_ >= 0 && r.timestamp_s > last_ts_) {
      intervals_.push_back(r.timestamp_s - last_ts_);
      while (intervals_.size() > 64) intervals_.pop_front();
    }
    if (r.timestamp_s >= last_ts_) last_ts_ = r.timestamp_s;
  }
  if (r.v.loss && std::isfinite(*r.v.loss) && run_records_ > options_.warmup_records) {
    if (!min_loss_ || *r.v.loss < *min_loss_) min_loss_ = r.v.loss;
  }
  if (r.v.epoch && (!min_epoch_ || *r.v.epoch < *min_epoch_)) min_epoch_ = r.v.epoch;
}

Signals SignalAnalyzer::Compute(const ProgressRecord& latest, double now_s) const {
  Signals s;
  s.records = records_;
  s.restarts = restarts_;
  const ExtractedValues& v = latest.v;
  // Progress.
  std::optional<double> within;
  if (v.step && v.total_steps && *v.total_steps > 0) {
    within =
        std::clamp(static_cast<double>(*v.step) / static_cast<double>(*v.total_steps), 0.0, 1.0);
  }
  if (v.epoch && v.total_epochs && *v.total_epochs > 0) {
    const double E = static_cast<double>(*v.total_epochs);
    double done;
    if (v.epoch_fractional) {
      done = *v.epoch;
    } else {
      // Integer epochs: 1-based unless the run printed epoch 0.
      const bool zero_based = min_epoch_ && *min_epoch_ < 0.5;
      done = (*v.epoch - (zero_based ? 0.0 : 1.0)) + within.value_or(1.0);
    }
    s.progress = std::clamp(done / E, 0.0, 1.0);
  } else if (within && !v.epoch) {
    s.progress = within;
  } else if (within && v.epoch && !v.total_epochs) {
    s.progress = within;  // progress of the current epoch only
  }
  // ETA.
  if (v.eta_s) {
    s.eta_s = v.eta_s;
  } else if (v.step_time_s && s.progress && v.step && v.total_steps && *v.step > 0) {
    double steps_left = static_cast<double>(*v.total_steps - *v.step);
    if (v.total_epochs && v.epoch && !v.epoch_fractional) {
      const bool zero_based = min_epoch_ && *min_epoch_ < 0.5;
      const double epochs_after =
          static_cast<double>(*v.total_epochs) - (*v.epoch + (zero_based ? 1.0 : 0.0));
      if (epochs_after > 0) steps_left += epochs_after * static_cast<double>(*v.total_steps);
    }
    s.eta_s = std::max(0.0, steps_left) * *v.step_time_s;
    s.eta_derived = true;
  }
  // Timing trend and slowdown.
  if (baseline_times_.size() >= 3 && recent_times_.size() >= 3) {
    const double base = Median(baseline_times_);
    const double recent = Median(std::vector<double>(recent_times_.begin(), recent_times_.end()));
    s.baseline_step_time_s = base;
    s.recent_step_time_s = recent;
    if (base > 0 && recent > 0) {
      s.throughput_trend = (1.0 / recent - 1.0 / base) / (1.0 / base);
      s.slowdown = recent > base * (1.0 + options_.slowdown_share);
    }
  }
  // Stall.
  if (intervals_.size() >= 2) {
    s.usual_interval_s = Median(std::vector<double>(intervals_.begin(), intervals_.end()));
  }
  if (now_s >= 0 && last_ts_ >= 0) {
    s.since_last_progress_s = std::max(0.0, now_s - last_ts_);
    if (s.usual_interval_s) {
      const double limit =
          std::max(options_.min_stall_s, options_.stall_factor * *s.usual_interval_s);
      s.stalled = *s.since_last_progress_s > limit;
    }
  }
  // Loss divergence.
  if (v.loss) {
    s.loss_nan = !std::isfinite(*v.loss);
    if (min_loss_ && std::isfinite(*v.loss) && *min_loss_ > 0) {
      s.loss_exploding = *v.loss > options_.explosion_factor * *min_loss_;
    }
  }
  s.min_loss = min_loss_;
  return s;
}

}  // namespace schedmate::tracker
