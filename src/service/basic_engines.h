#pragma once
// Built-in engines behind the service's ports, small enough to reason about at a glance. They
// are the service's own fallbacks; engines.h prefers the richer advisor/, tracker/ and failure/
// components where the build has them.
//
// BasicJobAdvisor: the median run time of finished jobs with the same (user, name), else the
//   same name, else half the user's time limit, else a 1-hour prior. Confidence grows with the
//   number of matches. History comes from the HistoryStore at construction plus Observe().
// BasicLogTracker: tails each job's output incrementally (at most `max_read_bytes` per call; a
//   log that grew more skips to its newest bytes), reads "step N[/M]", "loss X", "step_time Xs"
//   and "it/s", flags a stall when the step has not advanced for `stall_after`, and a slowdown
//   when the recent seconds-per-step exceed `slowdown_ratio` times the early rate.
// BasicFailureDiagnoser: the first infrastructure signature in the log (NVIDIA Xid, ECC, GPU off
//   the bus, NCCL system errors) or a NODE_FAIL state -> infra, plan = drain the node, then
//   (within FailedJob::retry_budget) requeue avoiding that node from the last checkpoint the log
//   says was saved + tell the user, or (budget used) hold + tell the operators; the requeue's
//   delay is left to the service's backoff. Otherwise the most telling application error
//   (Python exception line, segfault, CUDA OOM) -> app, plan = tell the user. Unknown when
//   neither is found.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "service/ports.h"
#include "store/history_store.h"

namespace re2 {
class RE2;
}

namespace schedmate::service {

class BasicJobAdvisor final : public JobAdvisor {
 public:
  // Loads up to `max_history` most recent finished jobs. `history` may be null (no prior).
  static Result<std::unique_ptr<BasicJobAdvisor>> Create(store::HistoryStore* history,
                                                         int64_t max_history = 20000);
  Result<Prediction> Predict(const JobContext& job, SimTime now) override;
  void Observe(const JobContext& job, Duration actual, JobState state) override;

 private:
  BasicJobAdvisor() = default;
  void Add(const std::string& user, const std::string& name, Duration d);
  std::map<std::string, std::vector<int64_t>> by_user_name_;  // "user\tname" -> seconds
  std::map<std::string, std::vector<int64_t>> by_name_;
};

struct BasicLogTrackerOptions {
  Duration stall_after = Duration::Minutes(10);
  double slowdown_ratio = 1.5;
  size_t max_read_bytes = size_t{1} << 20;
};

class BasicLogTracker final : public LogTracker {
 public:
  explicit BasicLogTracker(BasicLogTrackerOptions options = {});
  ~BasicLogTracker() override;
  Result<LogMetrics> Observe(const std::string& key, const std::string& path, SimTime now) override;
  void Forget(const std::string& key) override;
  size_t Tracked() const override { return state_.size(); }

 private:
  struct State {
    int64_t offset = 0;
    std::string partial;  // an unfinished last line
    LogMetrics latest;
    SimTime last_progress;
    int64_t first_step = -1;
    SimTime first_step_at;
    double early_rate = 0;  // seconds per step over the first window
    int64_t window_step = -1;
    SimTime window_at;
  };
  void ParseLine(std::string_view line, State& s, SimTime now);
  BasicLogTrackerOptions options_;
  std::map<std::string, State> state_;
  std::unique_ptr<re2::RE2> step_re_, loss_re_, step_time_re_, its_re_;
};

class BasicFailureDiagnoser final : public FailureDiagnoser {
 public:
  BasicFailureDiagnoser();
  ~BasicFailureDiagnoser() override;
  Result<Diagnosis> Diagnose(const FailedJob& job, std::string_view log) override;

 private:
  struct Rule {
    std::unique_ptr<re2::RE2> re;
    FailureClass cls;
    std::string category;
    std::string reason;
  };
  std::vector<Rule> infra_rules_, app_rules_;
};

}  // namespace schedmate::service
