#pragma once
// GET /v1/jobs: the live job list, one page at a time, from the published view.
//
// Order: the view's own (companion.h), by job id: shorter ids first, then byte order, so Slurm's
// numeric ids come in numeric order (array tasks `123_4` sort by the same rule: '_' after the
// digits). Ids are unique within a view: there is no tie to break.
//
// Query: `limit` (1..kMaxJobPageLimit, default kDefaultJobPageLimit), `after` (a job id: the page
// starts after it; any id, also one that left the queue, at most 64 characters; empty = the first
// page), and the filters
// `state` (Slurm's word, any case), `user` and `partition` (exact), which combine (and).
// A `limit` that is not an integer in range, or an over-long `after`, is a 400 naming the field.
//
// Body (compact JSON, keys sorted, as DumpJson writes it):
//   {"jobs": [...], "limit": L, "next": ID | null, "total": N, "updated_at": T}
// `total`: the jobs of the view that match the filters (all pages); `next`: the last id on this
// page when more matching jobs follow it, else null (pass it as `after` for the next page).
//
// Paging while the queue changes (each page is read from the view published when it is asked):
// no job is returned twice (ids only grow along the pages); every job that is in the queue and
// matches the filters from the first page's request to the last page's is returned exactly
// once, as of the view of its page; a job that left before its page was read is not returned;
// a new job is returned when its id sorts after the cursor (Slurm gives increasing ids, so new
// jobs normally appear on a later page). `total` and `updated_at` are those of each page's view.
//
// Cost: each job's JSON is written at most once per view (JobListCache), on the first request
// that needs it; a page is then a concatenation of the cached texts.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "api/retirer.h"
#include "core/result.h"
#include "service/companion.h"

namespace schedmate::api {

inline constexpr int64_t kDefaultJobPageLimit = 200;
inline constexpr int64_t kMaxJobPageLimit = 5000;
inline constexpr size_t kMaxJobIdChars = 64;

struct JobListQuery {
  int64_t limit = kDefaultJobPageLimit;
  std::string after;      // "" = from the first job
  std::string state;      // lower case; "" = any
  std::string user;       // "" = any
  std::string partition;  // "" = any
};

// The query from the request's parameters (`get` returns a value, or nullopt when absent).
// kInvalidArgument "limit: ..." / "after: ..." with `field` set to the parameter's name.
Result<JobListQuery> ParseJobListQuery(
    const std::function<std::optional<std::string>(const char*)>& get, std::string& field);

// One page: indices into view.jobs, in order.
struct JobPage {
  std::vector<size_t> jobs;
  int64_t total = 0;                // jobs of the view matching the filters
  std::optional<std::string> next;  // cursor for the following page
};

// The page of `view` for `q` (pure; see the file comment for order and guarantee).
JobPage SelectJobPage(const service::ServiceView& view, const JobListQuery& q);

// The serialised jobs of the newest view seen, filled lazily and at most once per job.
// Thread-safe. A request holding an older view than the newest gets its own short-lived cache.
// Replaced texts (and the view they hold) are freed on the Retirer's thread, not the request's.
class JobListCache {
 public:
  // The body (see the file comment) of the page `q` selects from `view`.
  std::string Body(const std::shared_ptr<const service::ServiceView>& view, const JobListQuery& q);

 private:
  struct Texts {
    explicit Texts(std::shared_ptr<const service::ServiceView> v);
    std::shared_ptr<const service::ServiceView> view;
    std::vector<std::string> json;           // per job of view->jobs
    std::unique_ptr<std::once_flag[]> once;  // per job: json[i] written
  };
  std::shared_ptr<Texts> TextsFor(const std::shared_ptr<const service::ServiceView>& view);
  std::mutex mu_;
  std::shared_ptr<Texts> current_;
  Retirer retirer_;  // last: destroyed first, releasing what it still holds
};

}  // namespace schedmate::api
