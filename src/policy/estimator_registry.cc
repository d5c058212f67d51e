#include "policy/estimator_registry.h"

#include <fmt/format.h>

#include <map>
#include <tuple>

namespace schedmate::policy {
namespace {

struct Mean {
  double sum = 0;
  int64_t n = 0;
  void Add(double v) {
    sum += v;
    ++n;
  }
  double Get() const { return sum / static_cast<double>(n); }
};

const Duration kNoHistory = Duration::Hours(1);

DurationEstimate Point(Duration d, double confidence, std::string why) {
  return DurationEstimate{d, d, d, confidence, std::move(why)};
}

// Rationale: the trace's own estimate column is what Lucid's QSSF consumes; jobs without one get
// the running mean so they neither jump nor starve the queue.
class FileEstimator : public DurationEstimator {
 public:
  std::string_view Name() const override { return "file"; }
  DurationEstimate Estimate(const JobRecord& job, SimTime) override {
    if (job.estimate && job.estimate_quantiles) {
      DurationEstimate e = Point(*job.estimate, 0.5, "estimate column with p10/p50/p90");
      e.low = job.estimate_quantiles->p10;
      e.median = job.estimate_quantiles->p50;
      e.high = job.estimate_quantiles->p90;
      return e;
    }
    if (job.estimate) return Point(*job.estimate, 0.5, "estimate column");
    if (all_.n == 0) return Point(kNoHistory, 0.0, "no estimate, no history: 1h");
    return Point(Duration::FromSecondsF(all_.Get()), 0.1, "no estimate: mean of finished jobs");
  }
  void Observe(const JobRecord& job, SimTime) override { all_.Add(job.duration.seconds_f()); }

 private:
  Mean all_;
};

// Rationale: perfect knowledge, for upper-bound experiments (what SJF/SRTF assume).
class OracleEstimator : public DurationEstimator {
 public:
  std::string_view Name() const override { return "oracle"; }
  DurationEstimate Estimate(const JobRecord& job, SimTime) override {
    return Point(job.duration, 1.0, "true duration");
  }
  void Observe(const JobRecord&, SimTime) override {}
};

// Rationale: users resubmit similar jobs; a per-(user, GPUs) history mean is the classic
// baseline (Lucid's naive estimator without job names). Strictly online.
class UserMeanEstimator : public DurationEstimator {
 public:
  std::string_view Name() const override { return "user-mean"; }
  DurationEstimate Estimate(const JobRecord& job, SimTime) override {
    if (auto it = user_gpu_.find({job.user, job.gpus.milli()}); it != user_gpu_.end())
      return Point(Duration::FromSecondsF(it->second.Get()), 0.4, "user mean at this GPU count");
    if (auto it = user_.find(job.user); it != user_.end())
      return Point(Duration::FromSecondsF(it->second.Get()), 0.25, "user mean");
    if (all_.n > 0) return Point(Duration::FromSecondsF(all_.Get()), 0.1, "mean of all jobs");
    return Point(kNoHistory, 0.0, "no history: 1h");
  }
  void Observe(const JobRecord& job, SimTime) override {
    const double d = job.duration.seconds_f();
    user_gpu_[{job.user, job.gpus.milli()}].Add(d);
    user_[job.user].Add(d);
    all_.Add(d);
  }

 private:
  std::map<std::pair<std::string, int64_t>, Mean> user_gpu_;
  std::map<std::string, Mean> user_;
  Mean all_;
};

template <typename T>
EstimatorFactory Make() {
  return []() -> Result<std::unique_ptr<DurationEstimator>> { return std::make_unique<T>(); };
}

}  // namespace

Result<std::unique_ptr<DurationEstimator>> EstimatorRegistry::Create(
    const std::string& name) const {
  SM_ASSIGN_OR_RETURN(const EstimatorFactory* factory, Find(name));
  return (*factory)();
}

Status RegisterBuiltinEstimators(EstimatorRegistry& r) {
  SM_RETURN_IF_ERROR(r.Register("file", "the trace's / --estimates file's estimate column",
                                Make<FileEstimator>()));
  SM_RETURN_IF_ERROR(r.Register("oracle", "the true duration", Make<OracleEstimator>()));
  SM_RETURN_IF_ERROR(r.Register("user-mean", "online mean of the user's finished jobs",
                                Make<UserMeanEstimator>()));
  return Status::Ok();
}

EstimatorRegistry& DefaultEstimatorRegistry() {
  static EstimatorRegistry registry;
  // A fresh registry cannot hold a duplicate, so registering the built-ins cannot fail.
  static const bool initialised = RegisterBuiltinEstimators(registry).ok();
  (void)initialised;
  return registry;
}

}  // namespace schedmate::policy
