#include "api/job_list.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "core/json_dump.h"
#include "core/rng.h"
#include "testing/test_util.h"

namespace schedmate::api {
namespace {

using nlohmann::json;

bool IdLess(const std::string& a, const std::string& b) {
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}

// A view of `ids` (any order), sorted as the companion sorts it; states alternate by id.
std::shared_ptr<service::ServiceView> ViewOf(std::vector<std::string> ids, int64_t generation) {
  std::sort(ids.begin(), ids.end(), IdLess);
  auto v = std::make_shared<service::ServiceView>();
  v->generation = generation;
  v->updated_at = SimTime::FromSeconds(1'800'000'000 + generation);
  for (const auto& id : ids) {
    service::JobView j;
    j.job.id = id;
    j.job.name = "job-" + id;
    j.job.user = id.back() % 3 == 0 ? "ana" : "bo";
    j.job.partition = id.back() % 2 == 0 ? "gpu" : "big";
    j.job.state = id.back() % 4 == 0 ? "RUNNING" : "PENDING";
    v->jobs.push_back(std::move(j));
  }
  return v;
}

Result<JobListQuery> Parse(const std::map<std::string, std::string>& params, std::string& field) {
  return ParseJobListQuery(
      [&](const char* key) -> std::optional<std::string> {
        auto it = params.find(key);
        if (it == params.end()) return std::nullopt;
        return it->second;
      },
      field);
}

std::vector<std::string> IdsOf(const service::ServiceView& v, const JobPage& page) {
  std::vector<std::string> ids;
  for (size_t i : page.jobs) ids.push_back(v.jobs[i].job.id);
  return ids;
}

TEST(JobListQuery, DefaultsAndBounds) {
  std::string field;
  auto q = Parse({}, field);
  ASSERT_OK(q);
  EXPECT_EQ(q->limit, kDefaultJobPageLimit);
  EXPECT_EQ(q->after, "");
  ASSERT_OK(Parse({{"limit", "1"}}, field));
  auto max = Parse({{"limit", "5000"}, {"after", "42"}, {"state", "RUNNING"}}, field);
  ASSERT_OK(max);
  EXPECT_EQ(max->limit, 5000);
  EXPECT_EQ(max->after, "42");
  EXPECT_EQ(max->state, "running");
  for (const char* bad : {"0", "-1", "5001", "1e3", "abc", "", "99999999999999999999"}) {
    SCOPED_TRACE(bad);
    field.clear();
    auto r = Parse({{"limit", bad}}, field);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(field, "limit");
  }
  field.clear();
  EXPECT_EQ(Parse({{"after", std::string(65, '7')}}, field).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(field, "after");
  auto empty_after = Parse({{"after", ""}}, field);  // what `after=` + a null next gives
  ASSERT_OK(empty_after);
  EXPECT_EQ(empty_after->after, "");
}

TEST(SelectJobPage, OrderIsTheViewsAndNextIsTheLastIdShown) {
  auto v = ViewOf({"9", "10", "11", "100", "12_3", "12_10", "2"}, 1);
  JobListQuery q;
  q.limit = 3;
  JobPage p1 = SelectJobPage(*v, q);
  EXPECT_EQ(IdsOf(*v, p1), (std::vector<std::string>{"2", "9", "10"}));
  EXPECT_EQ(p1.total, 7);
  ASSERT_TRUE(p1.next);
  EXPECT_EQ(*p1.next, "10");
  q.after = *p1.next;
  JobPage p2 = SelectJobPage(*v, q);
  EXPECT_EQ(IdsOf(*v, p2), (std::vector<std::string>{"11", "100", "12_3"}));
  q.after = *p2.next;
  JobPage p3 = SelectJobPage(*v, q);
  EXPECT_EQ(IdsOf(*v, p3), (std::vector<std::string>{"12_10"}));
  EXPECT_FALSE(p3.next);
  // A cursor between ids (a job that left), and one past the end.
  q.after = "95";
  EXPECT_EQ(IdsOf(*v, SelectJobPage(*v, q)), (std::vector<std::string>{"100", "12_3", "12_10"}));
  q.after = "999999";
  EXPECT_TRUE(SelectJobPage(*v, q).jobs.empty());
  EXPECT_EQ(SelectJobPage(*v, q).total, 7);
}

TEST(SelectJobPage, FiltersCombineAndCountTheirTotal) {
  std::vector<std::string> ids;
  for (int i = 1; i <= 200; ++i) ids.push_back(std::to_string(i));
  auto v = ViewOf(ids, 1);
  JobListQuery q;
  q.state = "running";
  q.user = "bo";
  q.partition = "gpu";
  q.limit = 4;
  int64_t want = 0;
  for (const auto& j : v->jobs)
    want += j.job.state == "RUNNING" && j.job.user == "bo" && j.job.partition == "gpu";
  ASSERT_GT(want, 8);
  std::vector<std::string> seen;
  for (int page = 0; page < 100; ++page) {
    JobPage p = SelectJobPage(*v, q);
    EXPECT_EQ(p.total, want);
    for (size_t i : p.jobs) {
      const auto& j = v->jobs[i].job;
      EXPECT_EQ(j.state, "RUNNING");
      EXPECT_EQ(j.user, "bo");
      EXPECT_EQ(j.partition, "gpu");
      seen.push_back(j.id);
    }
    if (!p.next) break;
    EXPECT_EQ(p.jobs.size(), 4u);
    q.after = *p.next;
  }
  EXPECT_EQ(static_cast<int64_t>(seen.size()), want);
}

// The guarantee: while jobs end and arrive between pages, no id comes twice, ids grow along the
// pages, and every job present from the first page's request to the last page's comes once.
TEST(SelectJobPage, CursorRoundTripWhileTheQueueChanges) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(seed);
    Rng rng(seed);
    std::set<int64_t> live;
    for (int64_t id = 1; id <= 3000; ++id)
      if (rng.Below(4) != 0) live.insert(id);
    int64_t next_id = 3001;
    std::set<int64_t> ever_gone;
    const std::set<int64_t> at_start = live;
    JobListQuery q;
    q.limit = static_cast<int64_t>(20 + rng.Below(300));  // above the 10 arrivals per page
    std::vector<std::string> returned;
    for (int64_t gen = 1;; ++gen) {
      std::vector<std::string> ids;
      for (int64_t id : live) ids.push_back(std::to_string(id));
      auto v = ViewOf(ids, gen);
      JobPage p = SelectJobPage(*v, q);
      EXPECT_EQ(p.total, static_cast<int64_t>(live.size()));
      auto page_ids = IdsOf(*v, p);
      returned.insert(returned.end(), page_ids.begin(), page_ids.end());
      if (!p.next) break;
      q.after = *p.next;
      // Between pages: jobs end anywhere in the queue and new ones arrive at the end.
      for (int k = 0; k < 40 && !live.empty(); ++k) {
        auto it = live.lower_bound(1 + static_cast<int64_t>(rng.Below(next_id)));
        if (it == live.end()) continue;
        ever_gone.insert(*it);
        live.erase(it);
      }
      for (int k = 0; k < 10; ++k) live.insert(next_id++);
      ASSERT_LT(gen, 10000);
    }
    EXPECT_TRUE(std::is_sorted(returned.begin(), returned.end(), IdLess));
    std::set<std::string> unique(returned.begin(), returned.end());
    EXPECT_EQ(unique.size(), returned.size()) << "an id came twice";
    for (int64_t id : at_start) {
      if (ever_gone.count(id)) continue;
      EXPECT_EQ(unique.count(std::to_string(id)), 1u) << id;
    }
  }
}

TEST(JobListCache, BodyIsTheDocumentsCompactDump) {
  auto v = ViewOf({"1", "2", "3", "4", "5"}, 7);
  v->jobs[1].job.name = "caf\xc3\xa9 \"quoted\" \xff";
  JobListCache cache;
  JobListQuery q;
  q.limit = 2;
  q.after = "1";
  std::string body = cache.Body(v, q);
  json doc = json::parse(body);
  EXPECT_EQ(body, DumpJson(doc));
  ASSERT_EQ(doc["jobs"].size(), 2u);
  EXPECT_EQ(doc["jobs"][0]["id"], "2");
  EXPECT_EQ(doc["jobs"][1]["id"], "3");
  EXPECT_EQ(doc["next"], "3");
  EXPECT_EQ(doc["total"], 5);
  EXPECT_EQ(doc["limit"], 2);
  EXPECT_EQ(doc["updated_at"], 1'800'000'007);
  q.after = "3";
  q.limit = 5;
  json last = json::parse(cache.Body(v, q));
  EXPECT_TRUE(last["next"].is_null());
  EXPECT_EQ(last["jobs"].size(), 2u);
}

// Texts are per view: a newer view's page shows its jobs as they are now, and a request still
// holding the older view gets that view's texts, not the newer one's.
TEST(JobListCache, EachViewIsSerialisedAsItIs) {
  auto old_view = ViewOf({"1", "2"}, 1);
  auto new_view = ViewOf({"1", "2"}, 2);
  new_view->jobs[0].job.state = "COMPLETING";
  JobListCache cache;
  JobListQuery q;
  EXPECT_EQ(json::parse(cache.Body(old_view, q))["jobs"][0]["state"], "PENDING");
  EXPECT_EQ(json::parse(cache.Body(new_view, q))["jobs"][0]["state"], "COMPLETING");
  EXPECT_EQ(json::parse(cache.Body(old_view, q))["jobs"][0]["state"], "PENDING");
  EXPECT_EQ(json::parse(cache.Body(new_view, q))["jobs"][0]["state"], "COMPLETING");
}

// Many threads asking overlapping pages of one view all get the same, complete bodies.
TEST(JobListCache, ConcurrentRequestsAgree) {
  std::vector<std::string> ids;
  for (int i = 1; i <= 2000; ++i) ids.push_back(std::to_string(i));
  auto v = ViewOf(ids, 3);
  JobListCache cache;
  JobListQuery q;
  q.limit = 5000;
  const std::string want = cache.Body(ViewOf(ids, 3), q);  // another cache's, for reference
  std::vector<std::string> got(8);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&, t] { got[t] = cache.Body(v, q); });
  for (auto& t : threads) t.join();
  for (const auto& body : got) EXPECT_EQ(body, want);
}

// What the retirer is given is freed on its thread, not the caller's; the destructor frees what
// is left.
TEST(Retirer, FreesOnItsOwnThread) {
  struct Probe {
    std::thread::id* freed_on = nullptr;
    ~Probe() {
      if (freed_on != nullptr) *freed_on = std::this_thread::get_id();
    }
  };
  std::thread::id first, second;
  {
    Retirer retirer;
    auto p = std::make_shared<Probe>();
    p->freed_on = &first;
    retirer.Retire(std::move(p));
    for (int i = 0; i < 5000 && retirer.released() < 1; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(retirer.released(), 1);
    auto q = std::make_shared<Probe>();
    q->freed_on = &second;
    retirer.Retire(std::move(q));
  }
  EXPECT_NE(first, std::thread::id());
  EXPECT_NE(first, std::this_thread::get_id());
  EXPECT_NE(second, std::thread::id());
  EXPECT_NE(second, std::this_thread::get_id());
}

}  // namespace
}  // namespace schedmate::api
