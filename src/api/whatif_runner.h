#pragma once
// POST /v1/whatif's two halves outside the route: WhatIfRunner, which runs one what-if at a time
// on a thread of its own with a timeout, and LoadServiceWhatIfSite, the site the service replays
// (sim/whatif_run.h does the rest, as for `schedmate whatif`).
//
// Timeout rule: the caller stops waiting after the timeout and the run is told to stop
// (WhatIfLimits::cancel, checked before each simulation); until it has stopped the runner stays
// busy, so at most one what-if computes at any time.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/result.h"
#include "service/companion.h"
#include "service/service_config.h"
#include "sim/whatif_run.h"
#include "store/history_store.h"

namespace schedmate::api {

class WhatIfRunner {
 public:
  using Work = std::function<Result<nlohmann::json>(const std::atomic<bool>& cancel)>;
  enum class Outcome { kDone, kBusy, kTimedOut };
  struct Answer {
    Outcome outcome = Outcome::kBusy;
    Result<nlohmann::json> result = Status::Internal("not run");  // kDone only
  };

  WhatIfRunner() = default;
  WhatIfRunner(const WhatIfRunner&) = delete;
  WhatIfRunner& operator=(const WhatIfRunner&) = delete;
  ~WhatIfRunner();  // tells a run still going to stop and waits for it

  // Runs `work` unless a run is going (kBusy, `work` not called); waits up to `timeout` for it
  // (kTimedOut: the run was told to stop and keeps the runner busy until it has).
  Answer Run(Work work, std::chrono::milliseconds timeout);
  bool busy() const;
  // Tells a run going now to stop at its next check (the server is stopping).
  void Cancel();

 private:
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    Result<nlohmann::json> result = Status::Internal("not run");
    std::atomic<bool> cancel{false};
  };
  mutable std::mutex mu_;
  bool busy_ = false;
  std::shared_ptr<Shared> current_;
  std::thread worker_;
};

// The site POST /v1/whatif replays: the cluster of whatif.slurm_conf (with its scheduler
// settings), else the nodes Slurm shows now with the scheduler settings serve read from
// $SLURM_CONF (start_estimates.slurm); the history of whatif.trace (read in whatif.format), else
// the store's finished jobs (the latest whatif.max_jobs). Errors name the file (file:line for a
// malformed trace) or say the store has too few finished jobs.
Result<sim::WhatIfSite> LoadServiceWhatIfSite(const service::ServiceConfig& config,
                                              const service::ServiceView& view,
                                              store::HistoryStore& history);

}  // namespace schedmate::api
