#include "service/queue_orderer.h"

#include <gtest/gtest.h>

#include <map>

namespace schedmate::service {
namespace {

const SimTime kNow = SimTime::FromSeconds(1'000'000);

// A pending job that arrived `ago_s` seconds before kNow with Slurm's basic priority.
OrderJob Job(const std::string& id, int gpus, int predicted_s, int ago_s, int64_t priority = 0,
             bool ours = false) {
  OrderJob j;
  j.id = id;
  j.user = "u";
  j.partition = "gpu";
  j.gpus_per_node = gpus;
  j.gpus = gpus;
  j.submit = kNow - Duration::Seconds(ago_s);
  j.predicted = Duration::Seconds(predicted_s);
  j.priority = priority != 0 ? priority : 4294901000 - std::stoll(id);
  j.ours = ours;
  return j;
}

std::vector<OrderNode> Nodes(int used1, int used2) {
  return {{"gpu1", {"gpu"}, 8, used1, true}, {"gpu2", {"gpu"}, 8, used2, true}};
}

OrderPlan MustPlan(const OrderOptions& o, const std::vector<OrderNode>& nodes,
                   const std::vector<OrderJob>& jobs) {
  auto orderer = QueueOrderer::Create(o);
  EXPECT_TRUE(orderer.ok()) << orderer.status().ToString();
  auto plan = orderer->Plan({kNow, nodes, jobs});
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return *plan;
}

std::vector<std::string> Ids(const OrderPlan& p) {
  std::vector<std::string> out;
  for (const auto& r : p.ranking) out.push_back(r.job_id);
  return out;
}

// Target priorities strictly decrease along the ranking of each partition.
void ExpectDecreasing(const OrderPlan& p) {
  for (size_t i = 1; i < p.ranking.size(); ++i) {
    if (p.ranking[i].partition != p.ranking[i - 1].partition) continue;
    EXPECT_LT(p.ranking[i].target, p.ranking[i - 1].target) << "at rank " << i;
  }
}

TEST(QueueOrderer, ShortJobBehindLongOnesRanksFirstUnderEveryShortestFirstPolicy) {
  // A full cluster; two long jobs queued before a short one.
  std::vector<OrderJob> jobs = {Job("1", 8, 3600, 300), Job("2", 8, 3600, 200),
                                Job("3", 8, 60, 100)};
  struct Case {
    std::string policy;
    std::vector<std::string> want;
  };
  for (const Case& c : {Case{"schedmate", {"3", "1", "2"}}, Case{"sjf", {"3", "1", "2"}},
                        Case{"qssf", {"3", "1", "2"}}, Case{"fifo", {"1", "2", "3"}}}) {
    SCOPED_TRACE(c.policy);
    OrderOptions o;
    o.policy = c.policy;
    OrderPlan p = MustPlan(o, Nodes(8, 8), jobs);
    EXPECT_EQ(Ids(p), c.want);
    ExpectDecreasing(p);
    EXPECT_EQ(p.ranking[0].reason, RankReason::kPolicyOrder);
    // First pass: every job moves into schedmate's band.
    EXPECT_EQ(p.changes.size(), 3u);
    for (const auto& ch : p.changes) {
      EXPECT_GE(ch.to, o.priority_min);
      EXPECT_LE(ch.to, o.priority_max);
    }
  }
}

TEST(QueueOrderer, JobThatFitsTheFreeGpusNowComesBeforeWiderJobs) {
  // 4 GPUs free: the policy starts the 4-GPU job now although the 8-GPU job ranks shorter.
  std::vector<OrderJob> jobs = {Job("1", 8, 60, 300), Job("2", 4, 600, 200)};
  OrderPlan p = MustPlan({}, Nodes(8, 4), jobs);
  EXPECT_EQ(Ids(p), (std::vector<std::string>{"2", "1"}));
  EXPECT_EQ(p.ranking[0].reason, RankReason::kStartsNow);
  EXPECT_EQ(p.ranking[1].reason, RankReason::kPolicyOrder);
}

TEST(QueueOrderer, AgedJobGoesFirstWhateverItsPrediction) {
  OrderOptions o;
  o.max_wait = Duration::Seconds(600);
  // "1" has waited 400 s (over half the bound), and is long; "2" and "3" are short.
  std::vector<OrderJob> jobs = {Job("1", 8, 7200, 400), Job("2", 8, 10, 100), Job("3", 8, 20, 50)};
  OrderPlan p = MustPlan(o, Nodes(8, 8), jobs);
  EXPECT_EQ(Ids(p), (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ(p.ranking[0].reason, RankReason::kAged);
  ASSERT_FALSE(p.changes.empty());
  EXPECT_EQ(p.changes[0].job_id, "1");
  EXPECT_NE(p.changes[0].reason.find("bound"), std::string::npos);
}

TEST(QueueOrderer, SecondPassWithAppliedPrioritiesChangesNothing) {
  std::vector<OrderJob> jobs = {Job("1", 8, 3600, 300), Job("2", 8, 3600, 200),
                                Job("3", 8, 60, 100)};
  OrderPlan first = MustPlan({}, Nodes(8, 8), jobs);
  std::map<std::string, int64_t> applied;
  for (const auto& c : first.changes) applied[c.job_id] = c.to;
  for (auto& j : jobs) {
    j.priority = applied.at(j.id);
    j.ours = true;
  }
  OrderPlan second = MustPlan({}, Nodes(8, 8), jobs);
  EXPECT_TRUE(second.changes.empty());
  EXPECT_EQ(Ids(second), Ids(first));
}

TEST(QueueOrderer, NewShortJobMovesOnlyItself) {
  std::vector<OrderJob> jobs = {Job("1", 8, 3600, 300), Job("2", 8, 1800, 200),
                                Job("3", 8, 60, 100)};
  OrderPlan first = MustPlan({}, Nodes(8, 8), jobs);
  for (auto& j : jobs) {
    for (const auto& c : first.changes)
      if (c.job_id == j.id) j.priority = c.to;
    j.ours = true;
  }
  jobs.push_back(Job("4", 8, 30, 10));  // shortest of all, at Slurm's own priority
  jobs.push_back(Job("5", 8, 900, 5));  // between "3" and "2"
  OrderPlan p = MustPlan({}, Nodes(8, 8), jobs);
  EXPECT_EQ(Ids(p), (std::vector<std::string>{"4", "3", "5", "2", "1"}));
  ExpectDecreasing(p);
  ASSERT_EQ(p.changes.size(), 2u);
  EXPECT_EQ(p.changes[0].job_id, "4");
  EXPECT_EQ(p.changes[1].job_id, "5");
  EXPECT_EQ(p.renumbered_partitions, 0);
}

TEST(QueueOrderer, ChangesPerPassAreCappedTopRanksFirst) {
  OrderOptions o;
  o.max_changes = 2;
  std::vector<OrderJob> jobs;
  for (int i = 1; i <= 6; ++i) jobs.push_back(Job(std::to_string(i), 8, 1000 - 100 * i, 60 - i));
  OrderPlan p = MustPlan(o, Nodes(8, 8), jobs);
  ASSERT_EQ(p.changes.size(), 2u);
  EXPECT_EQ(p.deferred, 4);
  EXPECT_EQ(p.changes[0].rank, 0);
  EXPECT_EQ(p.changes[1].rank, 1);
  EXPECT_EQ(p.changes[0].job_id, "6");  // the shortest prediction
}

TEST(QueueOrderer, UnknownPolicyAndBadBandAreRefused) {
  OrderOptions o;
  o.policy = "nope";
  EXPECT_EQ(QueueOrderer::Create(o).status().code(), StatusCode::kInvalidArgument);
  o = {};
  o.priority_min = 10;
  o.priority_max = 11;
  EXPECT_EQ(QueueOrderer::Create(o).status().code(), StatusCode::kInvalidArgument);
}

TEST(QueueOrderer, PartitionsAreRankedSeparately) {
  std::vector<OrderJob> jobs = {Job("1", 8, 3600, 300), Job("2", 8, 60, 200)};
  jobs[1].partition = "other";
  std::vector<OrderNode> nodes = {{"gpu1", {"gpu"}, 8, 8, true}, {"gpu2", {"other"}, 8, 8, true}};
  OrderPlan p = MustPlan({}, nodes, jobs);
  ASSERT_EQ(p.ranking.size(), 2u);
  EXPECT_EQ(p.ranking[0].rank, 0);
  EXPECT_EQ(p.ranking[1].rank, 0);
}

struct AssignCase {
  std::string name;
  std::vector<int64_t> current;
  std::vector<bool> ours;
  bool renumber;
};

TEST(AssignPriorities, KeepsOrderedValuesFillsGapsRenumbersWhenFull) {
  OrderOptions o;
  o.priority_min = 1000;
  o.priority_max = 2000;
  o.gap = 10;
  for (const AssignCase& c : {
           AssignCase{"all new", {5, 6, 7}, {false, false, false}, true},
           AssignCase{"already ordered", {1500, 1400, 1300}, {true, true, true}, false},
           AssignCase{"one out of order", {1500, 1300, 1400}, {true, true, true}, false},
           AssignCase{"new at top", {4, 1500, 1400}, {false, true, true}, false},
           AssignCase{"new at bottom", {1500, 1400, 4}, {true, true, false}, false},
           AssignCase{"no room between", {1500, 3, 1499}, {true, false, true}, true},
           AssignCase{"ours but outside the band", {5000, 1400}, {true, true}, false},
       }) {
    SCOPED_TRACE(c.name);
    std::unique_ptr<bool[]> ours(new bool[c.ours.size()]);
    for (size_t i = 0; i < c.ours.size(); ++i) ours[i] = c.ours[i];
    bool renumbered = false;
    auto t = AssignPriorities(c.current, std::span<const bool>(ours.get(), c.ours.size()), o,
                              &renumbered);
    ASSERT_EQ(t.size(), c.current.size());
    EXPECT_EQ(renumbered, c.renumber);
    for (size_t i = 0; i < t.size(); ++i) {
      EXPECT_GE(t[i], o.priority_min);
      EXPECT_LE(t[i], o.priority_max);
      if (i > 0) EXPECT_LT(t[i], t[i - 1]);
    }
    if (c.name == "already ordered") EXPECT_EQ(t, c.current);
    if (c.name == "one out of order") {
      int changed = 0;
      for (size_t i = 0; i < t.size(); ++i) changed += t[i] != c.current[i];
      EXPECT_EQ(changed, 1);
    }
  }
}

}  // namespace
}  // namespace schedmate::service
