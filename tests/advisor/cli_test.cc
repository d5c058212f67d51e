// CLI-level tests: schedmate advise / history replay / history import, through the built binary.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "core/file_util.h"
#include "store/history_store.h"
#include "testing/test_util.h"

namespace schedmate {
namespace {

using nlohmann::json;
using testing::RunSchedmate;
using testing::ShellQuote;
using testing::TempDir;
using testing::TestDataPath;

std::map<std::string, double> ReadPredictions(const std::string& path) {
  std::map<std::string, double> out;
  auto text = ReadFileToString(path);
  EXPECT_TRUE(text.ok());
  std::istringstream in(text.ok() ? *text : "");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "job_id,predicted_duration_s,p10_s,p50_s,p90_s");
  while (std::getline(in, line)) {
    size_t c = line.find(',');
    out[line.substr(0, c)] = std::stod(line.substr(c + 1));
  }
  return out;
}

// The shared job-source corpus (27 labelled jobs, ../shared/corpus/job-sources/manifest.jsonl),
// scored by ../shared/tools/score_metadata.py with the built binary. The jobs' files are rebuilt
// outside the repository from the manifest's repositories and commits (the corpus README says
// how) into $SCHEDMATE_JOBSRC_CACHE (default /work/jobsrc); without them the test is skipped.
TEST(AdviseCliTest, SharedJobCorpusScoresAtLeast95Percent) {
  SM_SKIP_WITHOUT_SHARED(scorer, "tools/score_metadata.py");
  SM_SKIP_WITHOUT_SHARED(manifest, "corpus/job-sources/manifest.jsonl");
  const char* env = std::getenv("SCHEDMATE_JOBSRC_CACHE");
  const std::string cache = env != nullptr ? env : "/work/jobsrc";
  if (!std::filesystem::exists(cache + "/j02_tyleryzhu_nanogpt_gpt2/slurm_submit.sh"))
    GTEST_SKIP() << "job-source cache " << cache << " not available";
  auto r = testing::RunShell("python3 " + ShellQuote(scorer) + " " + ShellQuote(manifest) + " " +
                             ShellQuote(cache) + " -- " + ShellQuote(testing::SchedmateBinary()) +
                             " advise --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(metadata: (\d+)/(\d+) labelled)")))
      << r.out;
  const int good = std::stoi(m[1]), total = std::stoi(m[2]);
  EXPECT_GE(total, 250) << r.out;  // every job scored, none skipped
  EXPECT_GE(good * 100, total * 95) << r.out;
}

TEST(AdviseCliTest, JsonHasMetadataSourcesAndEstimate) {
  TempDir home;
  // Run from the job's directory, as Slurm's submit directory: provenance is relative to it.
  auto r = testing::RunShell("cd " + ShellQuote(TestDataPath("advisor/argparse_job")) + " && " +
                             ShellQuote(testing::SchedmateBinary()) +
                             " advise run.sh --json --store " + ShellQuote(home.File("h.db")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  for (const char* f : {"framework", "task", "model", "model_family", "params", "dataset",
                        "per_device_batch_size", "global_batch_size", "gradient_accumulation",
                        "sequence_length", "image_size", "epochs", "max_steps", "learning_rate",
                        "optimizer", "precision", "num_gpus", "num_nodes", "launcher"}) {
    EXPECT_TRUE(j["metadata"].contains(f)) << f;
  }
  EXPECT_EQ(j["metadata"]["learning_rate"], json(0.01));
  EXPECT_TRUE(j["metadata"]["sequence_length"].is_null());
  EXPECT_EQ(j["sources"]["learning_rate"], json("run.sh:10"));
  // Empty store: a cold start from what the job says (epochs x data set over a throughput
  // prior, config/duration_priors.yaml), with the priors' low confidence.
  EXPECT_DOUBLE_EQ(j["estimate"]["confidence"].get<double>(), 0.1);
  EXPECT_NE(j["estimate"]["explanation"].get<std::string>().find("cold start"), std::string::npos);
  EXPECT_TRUE(j["estimate"]["neighbours"].is_array());
}

TEST(AdviseCliTest, MissingPathFails) {
  auto r = RunSchedmate("advise /nonexistent/job.sh --json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/job.sh"), std::string::npos);
}

TEST(HistoryCliTest, ReplayWritesOnePredictionPerJobOnline) {
  TempDir dir;
  std::string out = dir.File("pred.csv");
  const std::string replay = "history replay --trace " +
                             ShellQuote(TestDataPath("advisor/tiny_lucid.csv")) +
                             " --format lucid --out " + ShellQuote(out);
  // --point mode: the window over the raw runs, so the points are runs' own values.
  auto r = RunSchedmate(replay + " --point mode --over-penalty 0.6");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto p = ReadPredictions(out);
  ASSERT_EQ(p.size(), 8u);
  // Job 2 (submit 50): nothing finished yet (job 1 ends at 100): cold start default 1 h.
  EXPECT_DOUBLE_EQ(p["2"], 3600);
  // Job 4 (submit 200): jobs 1 and 2 finished (100, 120 s); exact tier, both in one x2 window
  // -> its smallest centre, 100.
  EXPECT_DOUBLE_EQ(p["4"], 100);
  // Job 7 (submit 6000): bob's job 3 finished at 5060 -> 5000, not capped (his latest).
  EXPECT_DOUBLE_EQ(p["7"], 5000);
  // Job 6 (submit 400): alice's newest finished job (5, failed after 30 s) weighs most, and the
  // penalty on evidence far below the point keeps the estimate at it.
  EXPECT_DOUBLE_EQ(p["6"], 30);

  // The default point (density): the same cold start; job 4's point holds both runs within x2;
  // job 7's single run is on the grid within a step (2^0.25).
  r = RunSchedmate(replay);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  p = ReadPredictions(out);
  ASSERT_EQ(p.size(), 8u);
  EXPECT_DOUBLE_EQ(p["2"], 3600);
  EXPECT_LE(std::abs(std::log2(p["4"] / 100)), 1.0);
  EXPECT_LE(std::abs(std::log2(p["4"] / 120)), 1.0);
  EXPECT_LE(std::abs(std::log2(p["7"] / 5000)), 0.25);
  EXPECT_NE(RunSchedmate(replay + " --point nearest").exit_code, 0);
  EXPECT_NE(RunSchedmate(replay + " --user-mix 1.5").exit_code, 0);
}

// --min-similarity moves the similar tier's threshold: dave's batch-128 job leans on his
// batch-256 job (a similar workload text) at the default 0.8 and with 0.5, never with 1.0.
TEST(HistoryCliTest, MinSimilarityDecidesWhatCountsAsSimilar) {
  TempDir dir;
  std::string trace = dir.File("t.csv");
  ASSERT_OK(WriteStringToFile(
      trace,
      "job_id,user,vc,gpu_num,cpu_num,state,submit_s,duration_s,dataset,model,batchsize,amp,"
      "speed,gpu_util,gmem_util,gmem\n"
      "1,dave,vc1,8,32,COMPLETED,0,5000,ImageNet,ResNet50,256,1,0,0,0,0\n"
      "2,dave,vc1,4,16,COMPLETED,6000,4000,ImageNet,ResNet50,128,1,0,0,0,0\n"));
  auto tiers = [&](const std::string& flag) {
    auto r = RunSchedmate("history replay --trace " + ShellQuote(trace) + " --out " +
                          ShellQuote(dir.File("p.csv")) + " " + flag);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    size_t at = r.err.find("evidence tiers:");
    return at == std::string::npos ? r.err : r.err.substr(at, r.err.find(';', at) - at);
  };
  EXPECT_EQ(tiers(""), "evidence tiers: cold-start=1 similar=1");
  EXPECT_EQ(tiers("--min-similarity 0.5"), "evidence tiers: cold-start=1 similar=1");
  EXPECT_EQ(tiers("--min-similarity 1"), "evidence tiers: cold-start=1 user=1");
  for (const char* value : {"1.5", "nan", "-inf"}) {
    SCOPED_TRACE(value);
    auto bad = RunSchedmate("history replay --trace " + ShellQuote(trace) + " --out " +
                            ShellQuote(dir.File("p.csv")) + " --min-similarity " + value);
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("--min-similarity"), std::string::npos) << bad.err;
  }
  // --over-penalty likewise: NaN passed CLI::Range.
  auto q = RunSchedmate("history replay --trace " + ShellQuote(trace) + " --out " +
                        ShellQuote(dir.File("p.csv")) + " --over-penalty nan");
  EXPECT_EQ(q.exit_code, 2);
  EXPECT_NE(q.err.find("--over-penalty"), std::string::npos) << q.err;
}

TEST(HistoryCliTest, ImportThenAdviseUsesTheStore) {
  TempDir dir;
  std::string db = dir.File("history.db");
  auto r = RunSchedmate("history import " + ShellQuote(TestDataPath("advisor/tiny_lucid.csv")) +
                        " --store " + ShellQuote(db));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("imported 8 jobs"), std::string::npos) << r.out;
  // SCHEDMATE_HOME decides the default store.
  auto r2 = testing::RunShell("SCHEDMATE_HOME=" + ShellQuote(dir.File("home")) + " " +
                              ShellQuote(testing::SchedmateBinary()) + " history import " +
                              ShellQuote(TestDataPath("advisor/tiny_lucid.csv")));
  ASSERT_EQ(r2.exit_code, 0) << r2.err;
  EXPECT_NE(r2.out.find(dir.File("home") + "/history.db"), std::string::npos) << r2.out;
  auto a = RunSchedmate("advise " + ShellQuote(TestDataPath("advisor/argparse_job/run.sh")) +
                        " --json --user carol --store " + ShellQuote(db));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  json j = json::parse(a.out);
  EXPECT_EQ(j["estimate"]["history_jobs"], json(8));
  EXPECT_NE(j["estimate"]["tier"], json("cold-start"));
  EXPECT_FALSE(j["estimate"]["neighbours"].empty());
  // --record keeps the job and the prediction in the store.
  auto rec = RunSchedmate("advise " + ShellQuote(TestDataPath("advisor/argparse_job/run.sh")) +
                          " --record --user carol --store " + ShellQuote(db));
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  auto st = store::SqliteHistoryStore::Open(db);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  std::string id = "advise:" + TestDataPath("advisor/argparse_job/run.sh");
  auto preds = (*st)->ListPredictions(id);
  ASSERT_TRUE(preds.ok());
  ASSERT_EQ(preds->size(), 1u) << id;
  EXPECT_EQ((*preds)[0].estimator, "advisor");
  EXPECT_FALSE((*preds)[0].explanation.empty());
  auto job = (*st)->FindJob(id);
  ASSERT_TRUE(job.ok() && job->has_value());
  EXPECT_FALSE((**job).metadata_json.empty());
}

// ---- history import: malformed rows and overflowed values (issue 17, defect 5) --------------

constexpr const char* kLucidHeader =
    "job_id,user,vc,gpu_num,cpu_num,state,submit_s,duration_s,dataset,model,batchsize,amp,speed,"
    "gpu_util,gmem_util,gmem\n";

// Jobs stored in `db` (-1 when the store cannot be opened).
int64_t StoredJobs(const std::string& db) {
  auto st = store::SqliteHistoryStore::Open(db);
  if (!st.ok()) return -1;
  auto n = (*st)->CountJobs();
  return n.ok() ? *n : -1;
}

class HistoryImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.File("history.db");
    // A store that already holds the 8 jobs of tiny_lucid.csv.
    auto r = RunSchedmate("history import " + ShellQuote(TestDataPath("advisor/tiny_lucid.csv")) +
                          " --store " + ShellQuote(db_));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(StoredJobs(db_), 8);
  }
  std::string Write(const std::string& name, const std::string& rows) {
    const std::string path = dir_.File(name);
    EXPECT_OK(WriteStringToFile(path, std::string(kLucidHeader) + rows));
    return path;
  }
  testing::CommandResult Import(const std::string& path, const std::string& flags = "") {
    return RunSchedmate("history import " + ShellQuote(path) + " --store " + ShellQuote(db_) + " " +
                        flags);
  }
  TempDir dir_;
  std::string db_;
};

// Row 3 has 15 fields: the import stops at it with file:line, exit 1, and stores nothing from the
// file (before: "imported 2 jobs", exit 0, the row dropped silently).
TEST_F(HistoryImportTest, MalformedRowStopsTheImportAndStoresNothing) {
  const std::string path = Write("bad.csv",
                                 "b1,ann,vc1,1,4,COMPLETED,0,100,d,m,64,1,0,0,0,0\n"
                                 "b2,ann,vc1,1,4,COMPLETED,5,100,d,m,64,1,0,0,0\n"
                                 "b3,ann,vc1,1,4,COMPLETED,9,100,d,m,64,1,0,0,0,0\n");
  auto r = Import(path);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(path + ":3:"), std::string::npos) << r.err;
  EXPECT_EQ(StoredJobs(db_), 8);  // b1 and b3 not stored either: all or nothing
}

// --skip-malformed goes on, and the summary counts the skipped rows with their file:line reasons.
TEST_F(HistoryImportTest, SkipMalformedCountsSkippedRowsWithReasons) {
  const std::string path = Write("bad.csv",
                                 "b1,ann,vc1,1,4,COMPLETED,0,100,d,m,64,1,0,0,0,0\n"
                                 "b2,ann,vc1,1,4,COMPLETED,5,100,d,m,64,1,0,0,0\n"
                                 "b3,ann,vc1,1,4,COMPLETED,9,100,d,m,64,1,0,0,0,0\n"
                                 "b4,ann,vc1,1e308,4,COMPLETED,9,100,d,m,64,1,0,0,0,0\n");
  auto j = Import(path, "--skip-malformed --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  json out = json::parse(j.out);
  EXPECT_EQ(out["imported"], 2);
  EXPECT_EQ(out["rows_read"], 4);
  EXPECT_EQ(out["rows_skipped"], 2);
  EXPECT_EQ(out["stored_jobs"], 10);
  ASSERT_EQ(out["skip_reasons"].size(), 2u);
  EXPECT_NE(out["skip_reasons"][0].get<std::string>().find(path + ":3:"), std::string::npos);
  EXPECT_NE(out["skip_reasons"][1].get<std::string>().find(path + ":5:"), std::string::npos);
  EXPECT_EQ(StoredJobs(db_), 10);
  // The text summary says the same.
  auto t = Import(path, "--skip-malformed");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("skipped 2"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find(path + ":5:"), std::string::npos) << t.out;
}

// gpu_num 1e308 used to be stored as gpus_milli = INT64_MIN; now it is refused (file:line).
TEST_F(HistoryImportTest, OverflowedValuesAreRefused) {
  const struct {
    const char* name;
    const char* row;
  } cases[] = {
      {"gpu_num", "o1,ann,vc1,1e308,4,COMPLETED,0,100,d,m,64,1,0,0,0,0\n"},
      {"duration_s", "o1,ann,vc1,1,4,COMPLETED,0,1e300,d,m,64,1,0,0,0,0\n"},
      {"submit_s", "o1,ann,vc1,1,4,COMPLETED,1e300,100,d,m,64,1,0,0,0,0\n"},
      {"cpu_num", "o1,ann,vc1,1,1e30,COMPLETED,0,100,d,m,64,1,0,0,0,0\n"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = Write(std::string(c.name) + ".csv", c.row);
    auto r = Import(path);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find(path + ":2:"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.name), std::string::npos) << r.err;
    EXPECT_EQ(StoredJobs(db_), 8);
  }
  // Nothing negative reached the store.
  auto st = store::SqliteHistoryStore::Open(db_);
  ASSERT_OK(st);
  auto jobs = (*st)->ListJobs({.finished_only = false});
  ASSERT_OK(jobs);
  for (const auto& j : *jobs) EXPECT_GE(j.job.gpus.milli(), 0) << j.job.id;
}

TEST_F(HistoryImportTest, UnknownFormatIsAUsageError) {
  auto r = Import(TestDataPath("advisor/tiny_lucid.csv"), "--format nosuch");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nosuch"), std::string::npos) << r.err;
}

// history replay reads traces the same way: strict by default, --skip-malformed to go on.
TEST(HistoryCliTest, ReplayStopsAtMalformedRowsUnlessSkipping) {
  TempDir dir;
  const std::string trace = dir.File("t.csv");
  ASSERT_OK(
      WriteStringToFile(trace, std::string(kLucidHeader) +
                                   "1,dave,vc1,8,32,COMPLETED,0,5000,I,R,256,1,0,0,0,0\n"
                                   "2,dave,vc1,x,32,COMPLETED,9,5000,I,R,256,1,0,0,0,0\n"
                                   "3,dave,vc1,8,32,COMPLETED,6000,4000,I,R,256,1,0,0,0,0\n"));
  const std::string out = dir.File("p.csv");
  auto strict =
      RunSchedmate("history replay --trace " + ShellQuote(trace) + " --out " + ShellQuote(out));
  EXPECT_EQ(strict.exit_code, 1);
  EXPECT_NE(strict.err.find(trace + ":3:"), std::string::npos) << strict.err;
  auto skip = RunSchedmate("history replay --skip-malformed --trace " + ShellQuote(trace) +
                           " --out " + ShellQuote(out));
  ASSERT_EQ(skip.exit_code, 0) << skip.err;
  EXPECT_EQ(ReadPredictions(out).size(), 2u);
  EXPECT_NE(skip.err.find("1 rows skipped"), std::string::npos) << skip.err;
}

// Shared data: the Venus trace must reach >= 90% of jobs within 100% relative error, replayed
// online from submit-time fields only (score_predictions.py's definition: |p - y| / y < 1, y >= 1).
// Issue 12's honest measure on Venus, online: within 100% stays >= 85%, within a factor of 2 beats
// the history baseline (mean of the same user's last two jobs with the same GPU count: 53.6%),
// and the p10-p90 interval holds 75-85% of the actual run times.
TEST(HistorySharedTest, VenusPredictionsAreCalibratedAndWithinAFactorOfTwo) {
  SM_SKIP_WITHOUT_SHARED(trace, "traces/venus_sept2020_lucid/venus_sept2020_jobs.csv");
  TempDir dir;
  std::string out = dir.File("venus.csv");
  auto r =
      RunSchedmate("history replay --trace " + ShellQuote(trace) + " --out " + ShellQuote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  struct Pred {
    double point, p10, p90;
  };
  std::map<std::string, Pred> pred;
  {
    auto csv = ReadFileToString(out);
    ASSERT_TRUE(csv.ok());
    std::istringstream in(*csv);
    std::string line;
    std::getline(in, line);
    ASSERT_EQ(line, "job_id,predicted_duration_s,p10_s,p50_s,p90_s");
    while (std::getline(in, line)) {
      std::vector<std::string> c;
      std::stringstream ls(line);
      std::string x;
      while (std::getline(ls, x, ',')) c.push_back(x);
      ASSERT_EQ(c.size(), 5u) << line;
      pred[c[0]] = {std::stod(c[1]), std::stod(c[2]), std::stod(c[4])};
    }
  }
  auto text = ReadFileToString(trace);
  ASSERT_TRUE(text.ok());
  std::istringstream in(*text);
  std::string line;
  std::getline(in, line);  // header: job_id,...,duration_s at column 7
  int64_t n = 0, within100 = 0, within2x = 0, covered = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> cols;
    std::stringstream ls(line);
    std::string c;
    while (std::getline(ls, c, ',')) cols.push_back(c);
    double y = std::max(std::stod(cols[7]), 1.0);
    ++n;
    auto it = pred.find(cols[0]);
    if (it == pred.end()) continue;
    const Pred& p = it->second;
    within100 += std::abs(p.point - y) / y < 1.0;
    within2x += p.point >= y / 2 && p.point <= y * 2;
    covered += y >= p.p10 && y <= p.p90;
  }
  ASSERT_GT(n, 20000);
  EXPECT_EQ(static_cast<int64_t>(pred.size()), n);
  EXPECT_GE(static_cast<double>(within100) / n, 0.85);
  EXPECT_GE(static_cast<double>(within2x) / n, 0.54);
  EXPECT_GE(static_cast<double>(covered) / n, 0.75);
  EXPECT_LE(static_cast<double>(covered) / n, 0.85);
}

}  // namespace
}  // namespace schedmate
