#include "api/whatif_runner.h"

#include <fmt/format.h>

#include "trace/trace_reader.h"

namespace schedmate::api {

WhatIfRunner::~WhatIfRunner() {
  Cancel();
  if (worker_.joinable()) worker_.join();
}

void WhatIfRunner::Cancel() {
  std::lock_guard lock(mu_);
  if (current_) current_->cancel = true;
}

bool WhatIfRunner::busy() const {
  std::lock_guard lock(mu_);
  return busy_;
}

WhatIfRunner::Answer WhatIfRunner::Run(Work work, std::chrono::milliseconds timeout) {
  std::shared_ptr<Shared> shared;
  {
    std::lock_guard lock(mu_);
    if (busy_) return Answer{};
    // busy_ is false: the last worker has finished its work (it may still be returning).
    if (worker_.joinable()) worker_.join();
    busy_ = true;
    shared = std::make_shared<Shared>();
    current_ = shared;
    worker_ = std::thread([this, shared, work = std::move(work)] {
      Result<nlohmann::json> r = work(shared->cancel);
      {
        std::lock_guard l(shared->mu);
        shared->result = std::move(r);
        shared->done = true;
      }
      shared->cv.notify_all();
      std::lock_guard l(mu_);
      busy_ = false;
    });
  }
  std::unique_lock l(shared->mu);
  if (!shared->cv.wait_for(l, timeout, [&] { return shared->done; })) {
    shared->cancel = true;
    return Answer{Outcome::kTimedOut, Status::DeadlineExceeded("what-if timed out")};
  }
  return Answer{Outcome::kDone, std::move(shared->result)};
}

Result<sim::WhatIfSite> LoadServiceWhatIfSite(const service::ServiceConfig& config,
                                              const service::ServiceView& view,
                                              store::HistoryStore& history) {
  sim::WhatIfSite site;
  if (!config.whatif_slurm_conf.empty()) {
    SM_RETURN_IF_ERROR(sim::LoadSiteFromSlurmConf(config.whatif_slurm_conf, true, site));
  } else {
    site.config = config.start_estimates.slurm;
    std::vector<int32_t> gpus;
    for (const auto& n : view.nodes) gpus.push_back(n.gpus_total);
    SM_RETURN_IF_ERROR(sim::SetSiteClusterFromNodes(gpus, "the nodes Slurm shows", site));
  }
  if (!config.whatif_trace.empty()) {
    trace::TraceReadOptions ro;
    ro.format = ParseTraceFormat(config.whatif_format).value_or(TraceFormat::kAuto);
    SM_ASSIGN_OR_RETURN(site.history, trace::ReadTrace(config.whatif_trace, ro));
    site.history.source = config.whatif_trace;
  } else {
    store::ListJobsOptions opts;
    opts.finished_only = true;
    opts.limit = config.whatif_max_jobs;
    SM_ASSIGN_OR_RETURN(auto stored, history.ListJobs(opts));
    std::vector<JobRecord> records;
    records.reserve(stored.size());
    for (auto& j : stored) {
      if (j.job.duration > Duration::Zero()) records.push_back(std::move(j.job));
    }
    site.history = sim::HistoryFromRecords(std::move(records), "the service's store");
  }
  SM_RETURN_IF_ERROR(sim::PrepareWhatIfHistory(site));
  return site;
}

}  // namespace schedmate::api
