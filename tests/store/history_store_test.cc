#include "store/history_store.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "store/test_backend.h"
#include "testing/test_util.h"

namespace schedmate::store {
namespace {

using ::schedmate::store::testing::FreshStoreUrl;

StoredJob MakeJob(const std::string& id, const std::string& user, int64_t submit_s,
                  std::optional<int64_t> run_s) {
  StoredJob s;
  s.job.id = id;
  s.job.user = user;
  s.job.vc = "vcA";
  s.job.gpus = GpuAmount::Whole(4);
  s.job.cpus = 16;
  s.job.submit = SimTime::FromSeconds(submit_s);
  s.job.model = "ResNet50";
  s.job.dataset = "ImageNet";
  s.job.batch_size = 256;
  s.job.amp = 1;
  if (run_s) {
    s.job.duration = Duration::Seconds(*run_s);
    s.finish = s.job.submit + s.job.duration;
    s.job.state = JobState::kCompleted;
  }
  s.fingerprint = "model resnet50 dataset imagenet";
  s.metadata_json = R"({"model":"resnet50"})";
  s.source = "test";
  return s;
}

TEST(HistoryStoreTest, RoundTripsJobs) {
  SKIP_WITHOUT_STORE_BACKEND();
  auto store = SqlHistoryStore::Open(FreshStoreUrl());
  ASSERT_OK(store);
  StoredJob j = MakeJob("j1", "alice", 100, 3600);
  j.job.time_limit = Duration::Hours(2);
  ASSERT_OK((*store)->PutJob(j));
  auto got = (*store)->FindJob("j1");
  ASSERT_OK(got);
  ASSERT_TRUE(got->has_value());
  const StoredJob& g = **got;
  EXPECT_EQ(g.job.user, "alice");
  EXPECT_EQ(g.job.gpus, GpuAmount::Whole(4));
  EXPECT_EQ(g.job.submit, SimTime::FromSeconds(100));
  EXPECT_EQ(g.job.duration, Duration::Seconds(3600));
  EXPECT_EQ(g.job.time_limit, Duration::Hours(2));
  EXPECT_EQ(g.finish, SimTime::FromSeconds(3700));
  EXPECT_EQ(g.job.state, JobState::kCompleted);
  EXPECT_EQ(g.job.amp, 1);
  EXPECT_EQ(g.fingerprint, j.fingerprint);
  EXPECT_EQ(g.metadata_json, j.metadata_json);
  auto missing = (*store)->FindJob("nope");
  ASSERT_OK(missing);
  EXPECT_FALSE(missing->has_value());
}

TEST(HistoryStoreTest, ListsFinishedJobsInFinishOrderWithFilters) {
  SKIP_WITHOUT_STORE_BACKEND();
  auto store = SqlHistoryStore::Open(FreshStoreUrl());
  ASSERT_OK(store);
  std::vector<StoredJob> jobs = {MakeJob("a", "alice", 0, 500), MakeJob("b", "bob", 10, 100),
                                 MakeJob("c", "alice", 20, 50), MakeJob("d", "alice", 30, {})};
  ASSERT_OK((*store)->PutJobs(jobs));
  EXPECT_EQ(*(*store)->CountJobs(), 4);
  auto all = (*store)->ListJobs({});
  ASSERT_OK(all);
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].job.id, "c");  // finishes at 70
  EXPECT_EQ((*all)[1].job.id, "b");  // 110
  EXPECT_EQ((*all)[2].job.id, "a");  // 500
  ListJobsOptions o;
  o.user = "alice";
  o.finished_before = SimTime::FromSeconds(100);
  auto alice = (*store)->ListJobs(o);
  ASSERT_OK(alice);
  ASSERT_EQ(alice->size(), 1u);
  EXPECT_EQ((*alice)[0].job.id, "c");
  ListJobsOptions latest;
  latest.limit = 2;
  auto last2 = (*store)->ListJobs(latest);
  ASSERT_OK(last2);
  ASSERT_EQ(last2->size(), 2u);
  EXPECT_EQ((*last2)[0].job.id, "b");
  EXPECT_EQ((*last2)[1].job.id, "a");
}

// Overflowed values (gpu_num 1e308 once became gpus_milli = INT64_MIN) are refused, and a batch
// holding one stores nothing: PutJobs is all or nothing.
TEST(HistoryStoreTest, NegativeValuesAreRefusedAndTheBatchIsNotStored) {
  SKIP_WITHOUT_STORE_BACKEND();
  auto store = SqlHistoryStore::Open(FreshStoreUrl());
  ASSERT_OK(store);
  struct Case {
    const char* name;
    void (*spoil)(StoredJob&);
  };
  const Case cases[] = {
      {"gpus", [](StoredJob& j) { j.job.gpus = GpuAmount::Milli(INT64_MIN); }},
      {"duration", [](StoredJob& j) { j.job.duration = Duration::Micros(-1); }},
      {"cpus", [](StoredJob& j) { j.job.cpus = -1; }},
      {"nodes", [](StoredJob& j) { j.job.nodes = -3; }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    StoredJob bad = MakeJob("bad", "u", 5, 10);
    c.spoil(bad);
    std::vector<StoredJob> batch = {MakeJob("ok1", "u", 0, 10), bad, MakeJob("ok2", "u", 9, 10)};
    Status st = (*store)->PutJobs(batch);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("bad"), std::string::npos) << st.message();
    EXPECT_EQ(*(*store)->CountJobs(), 0);
    EXPECT_EQ((*store)->PutJob(bad).code(), StatusCode::kInvalidArgument);
  }
  ASSERT_OK((*store)->PutJobs(std::vector<StoredJob>{MakeJob("ok1", "u", 0, 10)}));
  EXPECT_EQ(*(*store)->CountJobs(), 1);
}

TEST(HistoryStoreTest, RecordFinishUpdatesAndRejectsUnknown) {
  SKIP_WITHOUT_STORE_BACKEND();
  auto store = SqlHistoryStore::Open(FreshStoreUrl());
  ASSERT_OK(store);
  ASSERT_OK((*store)->PutJob(MakeJob("x", "u", 0, {})));
  ASSERT_OK((*store)->RecordFinish("x", SimTime::FromSeconds(90), Duration::Seconds(80),
                                   JobState::kFailed));
  auto x = (*store)->FindJob("x");
  ASSERT_OK(x);
  EXPECT_EQ((**x).job.state, JobState::kFailed);
  EXPECT_EQ((**x).finish, SimTime::FromSeconds(90));
  EXPECT_EQ((*store)->RecordFinish("y", SimTime(), Duration(), JobState::kCompleted).code(),
            StatusCode::kNotFound);
}

TEST(HistoryStoreTest, PredictionsKeepExplanations) {
  SKIP_WITHOUT_STORE_BACKEND();
  auto store = SqlHistoryStore::Open(FreshStoreUrl());
  ASSERT_OK(store);
  StoredPrediction p;
  p.job_id = "j9";
  p.made_at = SimTime::FromSeconds(5);
  p.estimator = "advisor";
  p.duration = Duration::Seconds(600);
  p.low = Duration::Seconds(300);
  p.high = Duration::Seconds(1200);
  p.confidence = 0.7;
  p.explanation = "median of 3 similar jobs";
  p.neighbours_json = R"([{"job_id":"j1"}])";
  ASSERT_OK((*store)->PutPrediction(p));
  p.duration = Duration::Seconds(700);
  ASSERT_OK((*store)->PutPrediction(p));
  auto got = (*store)->ListPredictions("j9");
  ASSERT_OK(got);
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].duration, Duration::Seconds(600));
  EXPECT_EQ((*got)[1].duration, Duration::Seconds(700));
  EXPECT_EQ((*got)[0].explanation, p.explanation);
  EXPECT_EQ((*got)[0].neighbours_json, p.neighbours_json);
  EXPECT_DOUBLE_EQ((*got)[0].confidence, 0.7);
}

TEST(HistoryStoreTest, OtherModulesShareTheFile) {
  SKIP_WITHOUT_STORE_BACKEND();
  auto store = SqlHistoryStore::Open(FreshStoreUrl());
  ASSERT_OK(store);
  std::vector<Migration> svc = {
      {1, "CREATE TABLE service_actions(id INTEGER PRIMARY KEY, what TEXT)"}};
  ASSERT_OK((*store)->db().Migrate("service", svc));
  EXPECT_EQ(*(*store)->db().SchemaVersion("history"),
            static_cast<int>(SqlHistoryStore::Migrations().size()));
  EXPECT_EQ(*(*store)->db().SchemaVersion("service"), 1);
}

TEST(HistoryStoreTest, CommittedHistorySurvivesKill9) {
  SKIP_WITHOUT_STORE_BACKEND();
  std::string path = FreshStoreUrl();
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(pipefd[0]);
    auto store = SqlHistoryStore::Open(path);
    if (!store.ok()) _exit(3);
    for (int i = 0; i < 50; ++i) {
      if (!(*store)->PutJob(MakeJob("j" + std::to_string(i), "u", i, 10)).ok()) _exit(4);
    }
    char c = 'r';
    if (write(pipefd[1], &c, 1) != 1) _exit(5);
    pause();
    _exit(0);
  }
  close(pipefd[1]);
  char c = 0;
  ASSERT_EQ(read(pipefd[0], &c, 1), 1);
  close(pipefd[0]);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  auto store = SqlHistoryStore::Open(path);
  ASSERT_OK(store);
  EXPECT_EQ(*(*store)->CountJobs(), 50);
}

TEST(HistoryStoreTest, DefaultPathHonoursSchedmateHome) {
  SKIP_WITHOUT_STORE_BACKEND();
  const char* old = std::getenv("SCHEDMATE_HOME");
  std::string saved = old ? old : "";
  setenv("SCHEDMATE_HOME", "/tmp/smhome", 1);
  EXPECT_EQ(DefaultHistoryPath(), "/tmp/smhome/history.db");
  unsetenv("SCHEDMATE_HOME");
  EXPECT_NE(DefaultHistoryPath().find("/.local/share/schedmate/history.db"), std::string::npos);
  if (old) setenv("SCHEDMATE_HOME", saved.c_str(), 1);
}

}  // namespace
}  // namespace schedmate::store
