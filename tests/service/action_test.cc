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

}  // namespace
}  // namespace schedmate::service
