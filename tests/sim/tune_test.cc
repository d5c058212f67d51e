#include "sim/tune.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "core/file_util.h"
#include "testing/test_util.h"
#include "trace/trace_reader.h"

namespace schedmate::sim {
namespace {

using testing::TempDir;
using testing::TestDataPath;

// The whatif fixture site (2 nodes x 8 GPUs, 30 jobs) and a 12-candidate grid.
TuneProblem Problem(TuneObjective objective = TuneObjective::kAvgQueue) {
  TuneProblem p;
  auto conf = policy::ReadSlurmConf(TestDataPath("sim/whatif/slurm.conf"));
  SM_CHECK(conf.ok()) << conf.status().ToString();
  p.site = conf->config;
  p.cluster.vcs = {VcSpec{"", conf->nodes.nodes, conf->nodes.gpus_per_node, 0}};
  auto grid = ParseTuneGrid(
      {"PriorityWeightAge=0,1000,10000", "PriorityWeightJobSize=0,1000", "bf_window=1,1440"});
  SM_CHECK(grid.ok()) << grid.status().ToString();
  p.grid = *grid;
  p.objective = objective;
  auto history = trace::ReadTrace(TestDataPath("sim/whatif/sacct.txt"));
  SM_CHECK(history.ok()) << history.status().ToString();
  CapDurationsAtLimits(*history);
  Status st = SplitForTuning(*history, 0.7, "sacct.txt", p);
  SM_CHECK(st.ok()) << st.ToString();
  return p;
}

TEST(TuneGrid, CandidatesAreTheProductWithTheLastAxisFastest) {
  auto grid = ParseTuneGrid({"PriorityWeightAge=0,1000,10000", "bf_window=1, 1440"});
  ASSERT_OK(grid);
  EXPECT_EQ(grid->candidates, 6u);
  using Settings = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(grid->Settings(0), (Settings{{"PriorityWeightAge", "0"}, {"bf_window", "1"}}));
  EXPECT_EQ(grid->Settings(1), (Settings{{"PriorityWeightAge", "0"}, {"bf_window", "1440"}}));
  EXPECT_EQ(grid->Settings(5), (Settings{{"PriorityWeightAge", "10000"}, {"bf_window", "1440"}}));
  const policy::SlurmConfig c = grid->Apply(policy::SlurmConfig{}, 3);
  EXPECT_EQ(c.weight_age, 1000);
  EXPECT_EQ(c.bf_window, Duration::Minutes(1440));
  EXPECT_EQ(grid->Specs(),
            (std::vector<std::string>{"PriorityWeightAge=0,1000,10000", "bf_window=1,1440"}));
  auto defaults = ParseTuneGrid({});
  ASSERT_OK(defaults);
  EXPECT_EQ(defaults->candidates, 36u);
}

TEST(TuneGrid, BadSpecsNameTheSpec) {
  const std::vector<std::string> bad[] = {
      {"PriorityWeightMoon=1"},
      {"bf_window=0"},
      {"bf_window=,"},
      {"=1"},
      {"PriorityWeightAge=0,1,2,3,4,5,6,7,8,9", "PriorityWeightQOS=0,1,2,3,4,5,6,7,8,9",
       "PriorityWeightJobSize=0,1,2,3,4,5,6,7,8,9,10"}};
  for (const auto& specs : bad) {
    SCOPED_TRACE(specs[0]);
    auto grid = ParseTuneGrid(specs);
    EXPECT_EQ(grid.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(grid.status().message().find("--grid"), std::string::npos);
  }
}

TEST(TuneChunk, ChunksAreContiguousDisjointAndCover) {
  for (size_t candidates : {1u, 7u, 36u, 1000u}) {
    for (int32_t chunks : {1, 2, 3, 16}) {
      if (static_cast<size_t>(chunks) > candidates) continue;
      SCOPED_TRACE(fmt::format("{} candidates, {} chunks", candidates, chunks));
      size_t next = 0, smallest = candidates, largest = 0;
      for (int32_t k = 0; k < chunks; ++k) {
        const CandidateRange r = TuneChunk(candidates, k, chunks);
        EXPECT_EQ(r.begin, next);
        smallest = std::min(smallest, r.end - r.begin);
        largest = std::max(largest, r.end - r.begin);
        next = r.end;
      }
      EXPECT_EQ(next, candidates);
      EXPECT_LE(largest - smallest, 1u);
    }
  }
}

TEST(Tune, ChunkedScoresEqualTheWholeSweepAndThreadsDoNotMatter) {
  const TuneProblem p = Problem();
  auto whole = ScoreCandidates(p, 0, p.grid.candidates);
  ASSERT_OK(whole);
  ASSERT_EQ(whole->size(), 12u);
  auto threaded = ScoreCandidates(p, 0, p.grid.candidates, /*threads=*/3);
  ASSERT_OK(threaded);
  EXPECT_EQ(*threaded, *whole);
  // The candidates do not all score alike (the grid matters on this history).
  auto [lo, hi] =
      std::minmax_element(whole->begin(), whole->end(),
                          [](const auto& x, const auto& y) { return x.objective < y.objective; });
  EXPECT_LT(lo->objective, hi->objective);

  // Through the workers' files, as --via-slurm gathers them: the same scores, the same answer.
  TempDir dir;
  std::vector<CandidateScore> merged;
  for (int32_t k = 0; k < 5; ++k) {
    const CandidateRange r = TuneChunk(p.grid.candidates, k, 5);
    auto part = ScoreCandidates(p, r.begin, r.end);
    ASSERT_OK(part);
    const std::string path = dir.File(fmt::format("chunk-{}.json", k));
    ASSERT_OK(WriteStringToFile(path, TuneChunkToJson(p, k, 5, *part).dump()));
    auto read = ReadTuneChunk(path, p, k, 5);
    ASSERT_OK(read);
    merged.insert(merged.end(), read->begin(), read->end());
  }
  EXPECT_EQ(merged, *whole);
  auto local = FinishTune(p, *whole, {});
  auto gathered = FinishTune(p, merged, {});
  ASSERT_OK(local);
  ASSERT_OK(gathered);
  EXPECT_EQ(*local, *gathered);
}

TEST(Tune, RecommendationIsTheFirstStrictlyBestCandidate) {
  TuneProblem p = Problem();
  auto scores = ScoreCandidates(p, 0, p.grid.candidates);
  ASSERT_OK(scores);
  auto out = FinishTune(p, *scores, {"a note"});
  ASSERT_OK(out);
  const double train_baseline = (*out)["validation"]["train_baseline"].get<double>();
  // Expected by hand: the lowest score below the site's, the lowest index among equals.
  std::optional<size_t> want;
  double best = train_baseline;
  for (const auto& s : *scores) {
    if (s.objective < best) {
      best = s.objective;
      want = s.index;
    }
  }
  ASSERT_TRUE(want.has_value()) << "the fixture's grid should beat the site on training";
  nlohmann::json values = nlohmann::json::object();
  for (const auto& [k, v] : p.grid.Settings(*want)) values[k] = v;
  EXPECT_EQ((*out)["recommended"], values);
  EXPECT_DOUBLE_EQ((*out)["validation"]["train_best"].get<double>(), best);
  EXPECT_EQ((*out)["notes"], nlohmann::json({"a note"}));

  // Every candidate tied with the site: keep the site's settings.
  std::vector<CandidateScore> ties = *scores;
  for (auto& s : ties) s.objective = train_baseline;
  auto kept = FinishTune(p, ties, {});
  ASSERT_OK(kept);
  EXPECT_TRUE((*kept)["recommended"].empty());
  EXPECT_EQ((*kept)["validation"]["validation_predicted"],
            (*kept)["validation"]["validation_baseline"]);
  // Two equal best candidates: the lower index wins.
  for (auto& s : ties) s.objective = train_baseline + 1;
  ties[7].objective = ties[4].objective = train_baseline - 1;
  auto first = FinishTune(p, ties, {});
  ASSERT_OK(first);
  nlohmann::json four = nlohmann::json::object();
  for (const auto& [k, v] : p.grid.Settings(4)) four[k] = v;
  EXPECT_EQ((*first)["recommended"], four);
}

TEST(Tune, ChunkFilesFromAnotherProblemOrIncompleteAreRefused) {
  const TuneProblem p = Problem();
  TempDir dir;
  const CandidateRange r = TuneChunk(p.grid.candidates, 1, 3);
  auto part = ScoreCandidates(p, r.begin, r.end);
  ASSERT_OK(part);
  const nlohmann::json good = TuneChunkToJson(p, 1, 3, *part);
  struct Case {
    const char* name;
    std::string text;
    std::string in_message;
  };
  nlohmann::json other_objective = good, missing_score = good, other_chunking = good;
  other_objective["objective"] = "avg_jct_s";
  missing_score["scores"].erase(missing_score["scores"].begin());
  other_chunking["chunks"] = 4;
  const Case cases[] = {
      {"not JSON", "{\"scores\": [", "not a tune chunk"},
      {"other objective", other_objective.dump(), "objective"},
      {"other chunking", other_chunking.dump(), "chunks"},
      {"a score missing", missing_score.dump(), "candidate"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = dir.File("chunk.json");
    ASSERT_OK(WriteStringToFile(path, c.text));
    auto read = ReadTuneChunk(path, p, 1, 3);
    EXPECT_EQ(read.status().code(), StatusCode::kDataLoss);
    EXPECT_NE(read.status().message().find(path), std::string::npos);
    EXPECT_NE(read.status().message().find(c.in_message), std::string::npos)
        << read.status().message();
  }
  EXPECT_EQ(ReadTuneChunk(dir.File("none.json"), p, 1, 3).status().code(), StatusCode::kNotFound);
}

TEST(Tune, SplitNeedsTwoJobsEachSide) {
  TuneProblem p;
  JobTable t;
  for (int i = 0; i < 3; ++i) {
    JobRecord j;
    j.id = std::to_string(i);
    j.submit = SimTime::FromSeconds(i == 2 ? 100 : 0);
    t.jobs.push_back(j);
  }
  Status st = SplitForTuning(t, 0.5, "h.txt", p);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("h.txt"), std::string::npos);
}

}  // namespace
}  // namespace schedmate::sim
