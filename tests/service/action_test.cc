#include "service/action.h"

#include <gtest/gtest.h>

#include <set>

#include "service/service_store.h"
#include "store/sqlite_db.h"
#include "testing/test_util.h"

namespace schedmate::service {
namespace {

using schedmate::testing::TempDir;

TEST(ActionNamesTest, EveryKindAndOutcomeRoundTrips) {
  const ActionKind kinds[] = {ActionKind::kDrainNode,   ActionKind::kRequeue,
                              ActionKind::kHold,        ActionKind::kNotifyUser,
                              ActionKind::kNotifyAdmin, ActionKind::kResume,
                              ActionKind::kPriority,    ActionKind::kRestore};
  std::set<std::string_view> names;
  for (ActionKind k : kinds) {
    SCOPED_TRACE(ActionKindName(k));
    EXPECT_TRUE(names.insert(ActionKindName(k)).second);  // one name each
    auto back = ParseActionKind(ActionKindName(k));
    ASSERT_OK(back);
    EXPECT_EQ(*back, k);
  }
  const ActionOutcome outcomes[] = {ActionOutcome::kPlanned,    ActionOutcome::kDone,
                                    ActionOutcome::kDryRun,     ActionOutcome::kSkipped,
                                    ActionOutcome::kFailed,     ActionOutcome::kInterrupted,
                                    ActionOutcome::kNotRecorded};
  names.clear();
  for (ActionOutcome o : outcomes) {
    SCOPED_TRACE(ActionOutcomeName(o));
    EXPECT_TRUE(names.insert(ActionOutcomeName(o)).second);
    auto back = ParseActionOutcome(ActionOutcomeName(o));
    ASSERT_OK(back);
    EXPECT_EQ(*back, o);
  }
  // The names earlier releases stored, unchanged.
  EXPECT_EQ(ActionKindName(ActionKind::kDrainNode), "drain");
  EXPECT_EQ(ActionKindName(ActionKind::kNotifyUser), "notify");
  EXPECT_EQ(ActionOutcomeName(ActionOutcome::kDryRun), "dry-run");
}

TEST(ActionNamesTest, UnknownNameIsAnErrorNamingIt) {
  auto k = ParseActionKind("drain_node");
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(k.status().message().find("'drain_node'"), std::string::npos);
  EXPECT_FALSE(ParseActionOutcome("Done").ok());  // names are exact
  EXPECT_FALSE(ParseActionOutcome("").ok());
}

TEST(ServiceStoreActionsTest, StructuredFieldsRoundTripAndAnUnknownStoredValueIsDataLoss) {
  TempDir dir;
  auto db = store::SqliteDb::Open(dir.File("s.db"));
  ASSERT_OK(db);
  auto st = ServiceStore::Attach(**db);
  ASSERT_OK(st);
  ActionRecord a;
  a.at = SimTime::FromSeconds(1000);
  a.job_id = "9";
  a.kind = ActionKind::kRequeue;
  a.outcome = ActionOutcome::kPlanned;
  a.attempt = 2;
  a.budget = 3;
  a.delay = Duration::Seconds(120);
  a.release_at = a.at + *a.delay;
  a.exclude_nodes = {"gpu1", "gpu2"};
  auto id = (*st)->AddAction(a);
  ASSERT_OK(id);
  a.id = *id;
  a.outcome = ActionOutcome::kSkipped;
  a.skip_reason = "job_active";
  ASSERT_OK((*st)->UpdateActionResult(a));
  auto back = (*st)->RecentActions(10);
  ASSERT_OK(back);
  ASSERT_EQ(back->size(), 1u);
  const ActionRecord& r = back->front();
  EXPECT_EQ(r.kind, ActionKind::kRequeue);
  EXPECT_EQ(r.outcome, ActionOutcome::kSkipped);
  EXPECT_EQ(r.skip_reason, "job_active");
  EXPECT_EQ(r.attempt, 2);
  EXPECT_EQ(r.budget, 3);
  EXPECT_EQ(r.delay, Duration::Seconds(120));
  EXPECT_EQ(r.release_at, SimTime::FromSeconds(1120));
  EXPECT_EQ(r.exclude_nodes, (std::vector<std::string>{"gpu1", "gpu2"}));
  EXPECT_FALSE(r.requeue_outcome.has_value());
  // A notice records what became of its plan's requeue.
  ActionRecord notice;
  notice.at = a.at;
  notice.job_id = "9";
  notice.kind = ActionKind::kNotifyUser;
  notice.outcome = ActionOutcome::kDone;
  notice.requeue_outcome = ActionOutcome::kDryRun;
  ASSERT_OK((*st)->AddAction(notice));
  auto both = (*st)->RecentActions(10);
  ASSERT_OK(both);
  ASSERT_EQ(both->size(), 2u);
  EXPECT_EQ(both->front().requeue_outcome, ActionOutcome::kDryRun);
  ASSERT_OK((*db)->Exec("DELETE FROM service_actions WHERE id <> " + std::to_string(*id)));
  // A row written by a newer (or broken) schedmate: refused, naming the row and the value.
  ASSERT_OK(
      (*db)->Exec("UPDATE service_actions SET kind = 'reboot' WHERE id = " + std::to_string(*id)));
  auto bad = (*st)->RecentActions(10);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(bad.status().message().find("'reboot'"), std::string::npos);
  EXPECT_NE(bad.status().message().find("row " + std::to_string(*id)), std::string::npos);
}

TEST(ServiceStoreFailuresTest, ClassRoundTripsAndAnUnknownStoredClassIsDataLoss) {
  TempDir dir;
  auto db = store::SqliteDb::Open(dir.File("s.db"));
  ASSERT_OK(db);
  auto st = ServiceStore::Attach(**db);
  ASSERT_OK(st);
  for (FailureClass c : {FailureClass::kInfra, FailureClass::kApp, FailureClass::kUnknown}) {
    auto back = ParseFailureClass(FailureClassName(c));
    ASSERT_OK(back);
    EXPECT_EQ(*back, c);
  }
  FailureRecord f;
  f.run_key = "7@100";
  f.job_id = "7";
  f.cls = FailureClass::kApp;
  auto id = (*st)->AddFailure(f);
  ASSERT_OK(id);
  auto back = (*st)->RecentFailures(10);
  ASSERT_OK(back);
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ(back->front().cls, FailureClass::kApp);
  ASSERT_OK((*db)->Exec("UPDATE service_failures SET cls = 'cosmic_ray'"));
  auto bad = (*st)->RecentFailures(10);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(bad.status().message().find("'cosmic_ray'"), std::string::npos);
}

// A store written before clusters existed (service migrations 1..6) opens with its rows in the
// default cluster; each cluster's store then sees only its own rows, keys included.
TEST(ServiceStoreClustersTest, OldRowsBelongToTheDefaultClusterAndClustersStayApart) {
  TempDir dir;
  auto db = store::SqliteDb::Open(dir.File("s.db"));
  ASSERT_OK(db);
  auto all = ServiceMigrations();
  ASSERT_GE(all.size(), 7u);
  ASSERT_OK((*db)->Migrate("service", all.first(6)));
  for (const char* sql :
       {"INSERT INTO service_actions(at_us, job_id, node, kind, reason, dry_run, outcome, detail)"
        " VALUES(1, '5', '', 'requeue', 'r', 0, 'done', '')",
        "INSERT INTO service_priorities(job_id, submit_us, original, nice, explicit, left_alone,"
        " ours, first_seen_us) VALUES('5', 1, 100, 0, 0, '', 7, 1)",
        "INSERT INTO service_metrics(job_id, at_us, stalled, slowdown) VALUES('5', 1, 0, 0)",
        "INSERT INTO service_kv(key, value) VALUES('cursor', '12')",
        "INSERT INTO service_leader(id, holder, epoch, expires_us, renewed_us)"
        " VALUES(1, 'h', 4, 0, 0)"}) {
    auto st = (*db)->Prepare(sql);
    ASSERT_OK(st);
    ASSERT_OK(st->Run());
  }
  auto old = ServiceStore::Attach(**db);  // applies the cluster migration
  ASSERT_OK(old);
  auto b = ServiceStore::Attach(**db, "b");
  ASSERT_OK(b);
  EXPECT_EQ((*old)->cluster(), "default");
  EXPECT_EQ(*(*old)->CountRequeues("5"), 1);
  EXPECT_EQ(*(*b)->CountRequeues("5"), 0);
  ASSERT_TRUE((*old)->FindPriority("5")->has_value());
  EXPECT_FALSE((*b)->FindPriority("5")->has_value());
  EXPECT_EQ((*old)->MetricSeries("5", 10)->size(), 1u);
  EXPECT_TRUE((*b)->MetricSeries("5", 10)->empty());
  EXPECT_EQ(*(*old)->GetValue("cursor"), std::optional<std::string>("12"));
  EXPECT_FALSE((*b)->GetValue("cursor")->has_value());
  auto lease = (*db)->Prepare("SELECT epoch FROM service_leader WHERE cluster = 'default'");
  ASSERT_OK(lease);
  ASSERT_TRUE(*lease->Step());
  EXPECT_EQ(lease->ColumnInt(0), 4);

  // The same job id on cluster b is another job: its own priority, metrics, actions and keys.
  PriorityRecord p;
  p.job_id = "5";
  p.original = 200;
  ASSERT_OK((*b)->PutPriority(p));
  ASSERT_OK((*b)->SetValue("cursor", "99"));
  ActionRecord a;
  a.job_id = "5";
  a.kind = ActionKind::kRequeue;
  a.outcome = ActionOutcome::kDone;
  ASSERT_OK((*b)->AddAction(a));
  ASSERT_OK((*b)->AddAction(a));
  EXPECT_EQ((*b)->FindPriority("5")->value().original, 200);
  EXPECT_EQ((*old)->FindPriority("5")->value().original, 100);
  EXPECT_EQ(*(*b)->CountRequeues("5"), 2);
  EXPECT_EQ(*(*old)->CountRequeues("5"), 1);
  EXPECT_EQ(*(*old)->GetValue("cursor"), std::optional<std::string>("12"));
  EXPECT_EQ(*(*b)->GetValue("cursor"), std::optional<std::string>("99"));
  EXPECT_EQ((*b)->RecentActions(10)->size(), 2u);
  EXPECT_EQ((*old)->RecentActions(10)->size(), 1u);
  EXPECT_EQ(ServiceStore::Attach(**db, "no'quote").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace schedmate::service
