#include "api/job_list.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "api/json_codecs.h"
#include "core/json_dump.h"
#include "core/strings.h"

namespace schedmate::api {

namespace {

// The view's order (companion.h): shorter ids first, then byte order.
bool IdBefore(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

bool Matches(const service::JobView& j, const JobListQuery& q) {
  return (q.state.empty() || EqualsIgnoreCase(j.job.state, q.state)) &&
         (q.user.empty() || j.job.user == q.user) &&
         (q.partition.empty() || j.job.partition == q.partition);
}

}  // namespace

Result<JobListQuery> ParseJobListQuery(
    const std::function<std::optional<std::string>(const char*)>& get, std::string& field) {
  JobListQuery q;
  if (auto limit = get("limit")) {
    auto v = ParseInt(*limit);
    if (!v || *v < 1 || *v > kMaxJobPageLimit) {
      field = "limit";
      return Status::InvalidArgument(fmt::format("limit: '{}' is not an integer in 1..{}",
                                                 Utf8Prefix(*limit, 40), kMaxJobPageLimit));
    }
    q.limit = *v;
  }
  if (auto after = get("after")) {
    if (after->size() > kMaxJobIdChars) {
      field = "after";
      return Status::InvalidArgument(
          fmt::format("after: a job id of at most {} characters (the `next` of the previous page)",
                      kMaxJobIdChars));
    }
    q.after = *after;
  }
  if (auto state = get("state")) q.state = ToLower(*state);
  if (auto user = get("user")) q.user = *user;
  if (auto partition = get("partition")) q.partition = *partition;
  return q;
}

JobPage SelectJobPage(const service::ServiceView& view, const JobListQuery& q) {
  JobPage page;
  const auto& jobs = view.jobs;
  size_t begin = 0;
  if (!q.after.empty()) {
    auto it = std::upper_bound(
        jobs.begin(), jobs.end(), q.after,
        [](const std::string& key, const service::JobView& j) { return IdBefore(key, j.job.id); });
    begin = static_cast<size_t>(it - jobs.begin());
  }
  const bool filtered = !q.state.empty() || !q.user.empty() || !q.partition.empty();
  if (!filtered) {
    page.total = static_cast<int64_t>(jobs.size());
    size_t end = std::min(jobs.size(), begin + static_cast<size_t>(q.limit));
    for (size_t i = begin; i < end; ++i) page.jobs.push_back(i);
    if (end < jobs.size()) page.next = jobs[end - 1].job.id;
    return page;
  }
  bool more = false;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!Matches(jobs[i], q)) continue;
    ++page.total;
    if (i < begin) continue;
    if (static_cast<int64_t>(page.jobs.size()) < q.limit) {
      page.jobs.push_back(i);
    } else {
      more = true;
    }
  }
  if (more) page.next = jobs[page.jobs.back()].job.id;
  return page;
}

JobListCache::Texts::Texts(std::shared_ptr<const service::ServiceView> v)
    : view(std::move(v)),
      json(view->jobs.size()),
      once(std::make_unique<std::once_flag[]>(view->jobs.size())) {}

std::shared_ptr<JobListCache::Texts> JobListCache::TextsFor(
    const std::shared_ptr<const service::ServiceView>& view) {
  std::shared_ptr<Texts> fresh;
  std::shared_ptr<Texts> old;
  {
    std::lock_guard lock(mu_);
    if (current_ && current_->view == view) return current_;
    // A request that took its view before a newer one was published: its own texts, once.
    if (current_ && current_->view->generation > view->generation) {
      return std::make_shared<Texts>(view);
    }
    old = std::exchange(current_, std::make_shared<Texts>(view));
    fresh = current_;
  }
  retirer_.Retire(std::move(old));  // its strings and, often, the last hold on its view
  return fresh;
}

std::string JobListCache::Body(const std::shared_ptr<const service::ServiceView>& view,
                               const JobListQuery& q) {
  JobPage page = SelectJobPage(*view, q);
  std::shared_ptr<Texts> texts = TextsFor(view);
  size_t bytes = 96;
  for (size_t i : page.jobs) {
    std::call_once(texts->once[i], [&] {
      // With the cluster it runs on (slurm.clusters; "default" without).
      nlohmann::json j = ToJson(view->jobs[i], /*detail=*/false);
      j["cluster"] = view->cluster;
      texts->json[i] = DumpJson(j);
    });
    bytes += texts->json[i].size() + 1;
  }
  // Byte for byte what DumpJson of the document gives (compact, keys sorted).
  std::string out;
  out.reserve(bytes);
  out += "{\"jobs\":[";
  for (size_t k = 0; k < page.jobs.size(); ++k) {
    if (k > 0) out += ',';
    out += texts->json[page.jobs[k]];
  }
  out += fmt::format("],\"limit\":{},\"next\":{},\"total\":{},\"updated_at\":{}}}", q.limit,
                     page.next ? DumpJson(nlohmann::json(*page.next)) : "null", page.total,
                     view->updated_at.seconds());
  return out;
}

}  // namespace schedmate::api
