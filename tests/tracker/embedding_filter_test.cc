// The embeddings stage-1 filter with scripted embedders: the kNN rule and its tie-breaks, the
// template budget and batching, the dimension/count/empty checks, fallback labels, and the
// two-pass scan (veto, promotion, fallback to the built-in result).
#include "tracker/embedding_filter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>

#include "core/file_util.h"
#include "testing/test_util.h"

namespace schedmate::tracker {
namespace {

// Vectors by a caller-supplied function of the text; records every request.
class ScriptedEmbedder final : public text::TextEmbedder {
 public:
  explicit ScriptedEmbedder(std::function<std::vector<float>(const std::string&)> fn)
      : fn_(std::move(fn)) {}
  std::string Name() const override { return "scripted"; }
  size_t Dimension() const override { return 0; }
  Result<std::vector<std::vector<float>>> Embed(std::span<const std::string> texts) const override {
    calls.emplace_back(texts.begin(), texts.end());
    if (!fail.ok()) return fail;
    std::vector<std::vector<float>> out;
    for (const std::string& t : texts) out.push_back(fn_(t));
    if (drop_last && !out.empty()) out.pop_back();
    return out;
  }
  Status fail;
  bool drop_last = false;
  mutable std::vector<std::vector<std::string>> calls;

 private:
  std::function<std::vector<float>(const std::string&)> fn_;
};

// Exemplars without digits: their shape is their text.
std::vector<Exemplar> TwoByTwo() {
  return {{true, "p one", "ex:1"},
          {true, "p two", "ex:2"},
          {false, "o one", "ex:3"},
          {false, "o two", "ex:4"}};
}

// Vectors from a table; exemplars "p ..." -> x axis, "o ..." -> y axis.
std::function<std::vector<float>(const std::string&)> Table(
    std::map<std::string, std::vector<float>> t) {
  return [t = std::move(t)](const std::string& s) -> std::vector<float> {
    auto it = t.find(s);
    if (it != t.end()) return it->second;
    if (s.rfind("p ", 0) == 0) return {1, 0, 0};
    if (s.rfind("o ", 0) == 0) return {0, 1, 0};
    return {0, 0, 1};
  };
}

TemplateStats Tmpl(uint64_t key, std::string shape, int64_t lines, int64_t progress,
                   int64_t last_line = 1) {
  TemplateStats t;
  t.key = key;
  t.shape = std::move(shape);
  t.lines = lines;
  t.progress_lines = progress;
  t.valued_lines = lines;
  t.last_line = last_line;
  return t;
}

TEST(ExemplarsTest, ParsesLabelsCommentsAndBlankLines) {
  auto r =
      ParseExemplars("# comment\n\nprogress  step 1 loss 2\nother\tSaving model\n  \n", "x.txt");
  ASSERT_OK(r.status());
  ASSERT_EQ(r->size(), 2u);
  EXPECT_TRUE((*r)[0].progress);
  EXPECT_EQ((*r)[0].text, "step 1 loss 2");
  EXPECT_EQ((*r)[0].source, "x.txt:3");
  EXPECT_FALSE((*r)[1].progress);
  EXPECT_EQ((*r)[1].text, "Saving model");
}

TEST(ExemplarsTest, BadLabelOrMissingLineNamesFileAndLine) {
  auto bad = ParseExemplars("progress a b\ntraining step 1\n", "my.txt");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("my.txt:2:"), std::string::npos) << bad.status().message();
  auto empty = ParseExemplars("other\n", "my.txt");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("my.txt:1:"), std::string::npos);
}

TEST(ExemplarsTest, CompiledInFileParsesWithBothLabels) {
  auto r = ParseExemplars(BuiltinExemplarText(), "config/tracker_exemplars.txt");
  ASSERT_OK(r.status());
  size_t p = 0, o = 0;
  for (const Exemplar& e : *r) (e.progress ? p : o)++;
  EXPECT_GE(p, 10u);
  EXPECT_GE(o, 10u);
  EXPECT_EQ(BuiltinExemplars().size(), r->size());
}

TEST(LineShapeTest, MasksNumbersLikeTheMiner) {
  EXPECT_EQ(LineShape("epoch 3  step 12/400 loss=0.52"), "epoch <*> step <*> loss=#.#");
}

TEST(EmbeddingFilterTest, NearestExemplarsVoteAndTiesKeepTheBuiltinLabel) {
  ScriptedEmbedder emb(Table({{"near progress", {0.9f, 0.1f, 0}},
                              {"near other", {0.2f, 0.8f, 0}},
                              {"tie builtin progress", {1, 1, 0}},
                              {"tie builtin other", {1, 1, 0}},
                              {"far away", {0, 0, 1}}}));
  EmbeddingFilterOptions o;
  o.k = 4;  // all four exemplars vote: an exact tie for (1,1,0)
  EmbeddingProgressFilter f(emb, TwoByTwo(), o);
  ASSERT_OK(f.Label({Tmpl(1, "near progress", 1, 0), Tmpl(2, "near other", 1, 1),
                     Tmpl(3, "tie builtin progress", 4, 3), Tmpl(4, "tie builtin other", 4, 1),
                     Tmpl(5, "far away", 3, 2)}));
  ASSERT_NE(f.Find(1), nullptr);
  EXPECT_TRUE(f.Find(1)->progress);  // against the built-in (0 of 1 lines progress)
  EXPECT_TRUE(f.Find(1)->decided_by_embeddings);
  EXPECT_EQ(f.Find(1)->nearest, "ex:1");  // equal cosines: file order
  EXPECT_FALSE(f.Find(2)->progress);
  EXPECT_TRUE(f.Find(2)->decided_by_embeddings);
  // Exact ties: the built-in majority (3 of 4 -> progress; 1 of 4 -> other).
  EXPECT_TRUE(f.Find(3)->progress);
  EXPECT_FALSE(f.Find(3)->decided_by_embeddings);
  EXPECT_FALSE(f.Find(4)->progress);
  // Best cosine 0 < min_similarity: unsure, built-in majority (2 of 3).
  EXPECT_TRUE(f.Find(5)->progress);
  EXPECT_FALSE(f.Find(5)->decided_by_embeddings);
  EXPECT_EQ(f.report().unsure, 3u);
  EXPECT_EQ(f.report().decided, 2u);
  EXPECT_EQ(f.Find(99), nullptr);
}

TEST(EmbeddingFilterTest, KSmallerThanPoolBreaksCosineTiesByExemplarOrder) {
  ScriptedEmbedder emb(Table({{"diagonal", {1, 1, 0}}}));
  EmbeddingFilterOptions o;
  o.k = 3;  // p one, p two, o one (equal cosines, file order) -> 2 progress votes vs 1
  EmbeddingProgressFilter f(emb, TwoByTwo(), o);
  ASSERT_OK(f.Label({Tmpl(7, "diagonal", 2, 0)}));
  EXPECT_TRUE(f.Find(7)->progress);
  EXPECT_TRUE(f.Find(7)->decided_by_embeddings);
}

TEST(EmbeddingFilterTest, SelfLabelsKeepTheirLabelAndTeachTheirNeighbours) {
  // Template 10: the built-in is sure it is progress (3 of 3 lines with strong metrics), yet its
  // vector sits in the "other" region; template 11 (unsure) is closest to template 10.
  ScriptedEmbedder emb(
      Table({{"sure progress", {0, 0.6f, 0.8f}}, {"like the sure one", {0, 0.61f, 0.79f}}}));
  EmbeddingFilterOptions o;
  o.k = 1;
  TemplateStats sure = Tmpl(10, "sure progress", 3, 3);
  sure.strong_lines = 3;
  ASSERT_TRUE(sure.Confident().value_or(false));
  {
    EmbeddingProgressFilter f(emb, TwoByTwo(), o);
    ASSERT_OK(f.Label({sure, Tmpl(11, "like the sure one", 1, 0)}));
    EXPECT_TRUE(f.Find(10)->progress);
    EXPECT_FALSE(f.Find(10)->decided_by_embeddings);
    EXPECT_TRUE(f.Find(11)->progress);
    EXPECT_TRUE(f.Find(11)->decided_by_embeddings);
    EXPECT_EQ(f.Find(11)->nearest.rfind("self", 0), 0u) << f.Find(11)->nearest;
    EXPECT_EQ(f.report().self_labels, 1u);
  }
  {
    o.judge_confident = true;  // judged too, leaving itself out: the static exemplars decide
    EmbeddingProgressFilter f(emb, TwoByTwo(), o);
    ASSERT_OK(f.Label({sure, Tmpl(11, "like the sure one", 1, 0)}));
    EXPECT_FALSE(f.Find(10)->progress);
    EXPECT_TRUE(f.Find(10)->decided_by_embeddings);
  }
  {
    o.judge_confident = false;
    o.self_label = false;  // no self-labels: 11 follows the static "other" exemplars
    EmbeddingProgressFilter f(emb, TwoByTwo(), o);
    ASSERT_OK(f.Label({sure, Tmpl(11, "like the sure one", 1, 0)}));
    EXPECT_FALSE(f.Find(11)->progress);
  }
}

TEST(EmbeddingFilterTest, BudgetPriorityBatchingAndPerTextCache) {
  ScriptedEmbedder emb(Table({}));
  EmbeddingFilterOptions o;
  o.batch = 3;
  o.max_templates = 3;
  EmbeddingProgressFilter f(emb, TwoByTwo(), o);
  std::vector<TemplateStats> ts;
  ts.push_back(Tmpl(1, "old progress", 2, 1, /*last_line=*/10));
  ts.push_back(Tmpl(2, "new progress", 2, 1, /*last_line=*/50));
  ts.push_back(Tmpl(3, "valued", 2, 0, /*last_line=*/60));
  ts.push_back(Tmpl(4, "valued newer", 2, 0, /*last_line=*/70));
  TemplateStats bare = Tmpl(5, "bare", 1, 0, 80);
  bare.valued_lines = 0;  // no values, not confident (1 line): never embedded
  ts.push_back(bare);
  ts.push_back(Tmpl(6, "new progress", 1, 1, /*last_line=*/5));  // same shape as 2
  ASSERT_OK(f.Label(ts));
  // Group 0 (progress lines) newest first: 2, 1, 6 fill the budget of 3.
  EXPECT_NE(f.Find(1), nullptr);
  EXPECT_NE(f.Find(2), nullptr);
  EXPECT_NE(f.Find(6), nullptr);
  EXPECT_EQ(f.Find(3), nullptr);
  EXPECT_EQ(f.Find(4), nullptr);
  EXPECT_EQ(f.Find(5), nullptr);
  // 4 exemplar shapes + 2 distinct template shapes = 6 texts in batches of 3.
  EXPECT_EQ(f.report().texts_embedded, 6u);
  EXPECT_EQ(f.report().requests, 2);
  ASSERT_EQ(emb.calls.size(), 2u);
  for (const auto& c : emb.calls) EXPECT_LE(c.size(), 3u);
  EXPECT_EQ(f.report().templates_embedded, 3u);
  EXPECT_EQ(f.report().dimension, 3u);
}

TEST(EmbeddingFilterTest, DimensionMismatchAcrossRequestsIsDataLoss) {
  ScriptedEmbedder emb(Table({{"two dims", {1, 0}}}));
  EmbeddingFilterOptions o;
  o.batch = 1;
  EmbeddingProgressFilter f(emb, TwoByTwo(), o);
  Status st = f.Label({Tmpl(1, "two dims", 1, 1)});
  EXPECT_EQ(st.code(), StatusCode::kDataLoss);
  EXPECT_NE(st.message().find("dimension mismatch: expected 3, got 2"), std::string::npos)
      << st.message();
  EXPECT_EQ(
      FilterLabel(st, "x"),
      "builtin (embeddings answer rejected: embedding dimension mismatch: expected 3, got 2)");
}

TEST(EmbeddingFilterTest, EmptyMissingOrNonFiniteVectorsAreDataLoss) {
  {
    ScriptedEmbedder emb(Table({{"empty", {}}}));
    EmbeddingProgressFilter f(emb, TwoByTwo());
    Status st = f.Label({Tmpl(1, "empty", 1, 1)});
    EXPECT_EQ(st.code(), StatusCode::kDataLoss);
    EXPECT_NE(st.message().find("empty embedding"), std::string::npos) << st.message();
  }
  {
    ScriptedEmbedder emb(Table({}));
    emb.drop_last = true;
    EmbeddingProgressFilter f(emb, TwoByTwo());
    Status st = f.Label({Tmpl(1, "t", 1, 1)});
    EXPECT_EQ(st.code(), StatusCode::kDataLoss);
    EXPECT_NE(st.message().find("count mismatch"), std::string::npos) << st.message();
  }
  {
    ScriptedEmbedder emb(Table({{"nan", {NAN, 0, 0}}}));
    EmbeddingProgressFilter f(emb, TwoByTwo());
    EXPECT_EQ(f.Label({Tmpl(1, "nan", 1, 1)}).code(), StatusCode::kDataLoss);
  }
}

TEST(EmbeddingFilterTest, EmbedderErrorsPassThroughAndNameTheFallback) {
  ScriptedEmbedder emb(Table({}));
  emb.fail = Status::Unavailable("connection refused; POST http://127.0.0.1:9/v1/embeddings");
  EmbeddingProgressFilter f(emb, TwoByTwo());
  Status st = f.Label({Tmpl(1, "t", 1, 1)});
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_EQ(FilterLabel(st, "bge-m3"), "builtin (embeddings unavailable: connection refused)");
  EXPECT_EQ(FilterLabel(Status::Ok(), "bge-m3"), "embeddings (bge-m3)");
  EXPECT_TRUE(f.labels().empty());
}

TEST(EmbeddingFilterTest, ExemplarsNeedBothLabels) {
  ScriptedEmbedder emb(Table({}));
  EmbeddingProgressFilter f(emb, {{true, "p one", "ex:1"}});
  EXPECT_EQ(f.Label({Tmpl(1, "t", 1, 1)}).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(emb.calls.empty());
}

TEST(TemplateCensusTest, CountsPerSkeletonKeepsNewestShapeAndIsBounded) {
  TemplateCensus census;
  ParsedSegment seg;
  ExtractedValues v;
  v.has_strong_metric = true;
  LineKind progress;
  progress.cls = LineClass::kProgress;
  seg.skeleton = 7;
  seg.text = "step 1 loss 0.5";
  census.Observe(seg, v, progress, 1);
  seg.text = "step 2 loss 0.4";
  census.Observe(seg, v, progress, 2);
  auto t = census.Finish();
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].key, 7u);
  EXPECT_EQ(t[0].lines, 2);
  EXPECT_EQ(t[0].progress_lines, 2);
  EXPECT_EQ(t[0].strong_lines, 2);
  EXPECT_EQ(t[0].last_line, 2);
  EXPECT_EQ(t[0].shape, LineShape("step 2 loss 0.4"));
  EXPECT_TRUE(t[0].Confident().value_or(false));
  LineKind info;
  for (uint64_t k = 100; k < 100 + TemplateCensus::kMaxTemplates + 5; ++k) {
    seg.skeleton = k;
    census.Observe(seg, v, info, 3);
  }
  EXPECT_EQ(census.Finish().size(), TemplateCensus::kMaxTemplates);
  EXPECT_EQ(census.untracked_segments(), 6u);
}

// Two-pass scans over a small log: 12 "step" progress lines, then one line of a shape the
// built-in also takes as progress (a single line, so the built-in is not sure about it), then a
// line with values the built-in does not take.
class FilteredScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string log;
    for (int i = 1; i <= 12; ++i) {
      log += "step " + std::to_string(i) + "/40 loss=" + std::to_string(3.0 - 0.1 * i) + "\n";
    }
    log += "heartbeat iter 99 loss=0.5\n";  // line 13
    log += "promote gauge 42 widgets\n";    // line 14
    for (int i = 0; i < 8; ++i) log += "idle\n";
    path_ = dir_.File("train.log");
    ASSERT_OK(WriteStringToFile(path_, log));
  }
  // "step" shapes -> progress axis, "heartbeat" -> other axis, "promote" -> progress axis.
  static std::vector<float> Axis(const std::string& s) {
    if (s.find("heartbeat") != std::string::npos) return {0, 1, 0};
    if (s.find("promote") != std::string::npos) return {1, 0, 0};
    if (s.rfind("p ", 0) == 0 || s.find("step") != std::string::npos) return {1, 0, 0};
    if (s.rfind("o ", 0) == 0) return {0, 1, 0};
    return {0, 0, 1};
  }
  schedmate::testing::TempDir dir_;
  std::string path_;
};

TEST_F(FilteredScanTest, OtherLabelVetoesTheBuiltinsProgressLine) {
  auto builtin = ScanLog(path_, {});
  ASSERT_OK(builtin.status());
  ASSERT_TRUE(builtin->latest);
  ASSERT_EQ(builtin->latest->line_no, 13);  // the built-in takes the heartbeat line

  ScriptedEmbedder emb(Axis);
  FilteredScanOptions o;
  std::vector<int64_t> seen;
  auto r = ScanLogWithEmbeddingFilter(emb, TwoByTwo(), path_, o,
                                      [&](const ProgressRecord& p) { seen.push_back(p.line_no); });
  ASSERT_OK(r.status());
  ASSERT_OK(r->filter_status);
  ASSERT_TRUE(r->scan.latest);
  EXPECT_EQ(r->scan.latest->line_no, 12);
  EXPECT_EQ(r->report.vetoed_segments, 1u);
  EXPECT_EQ(r->report.requests, 1);
  ASSERT_EQ(seen.size(), 12u);  // the sink saw the final pass only
  EXPECT_EQ(seen.back(), 12);
  EXPECT_EQ(r->embedder_name, "scripted");
  EXPECT_FALSE(r->templates.empty());
}

TEST_F(FilteredScanTest, ProgressLabelPromotesUnreadLinesAsStage2Candidates) {
  ScriptedEmbedder emb(Axis);
  FilteredScanOptions o;
  o.collect_candidates = true;
  auto r = ScanLogWithEmbeddingFilter(emb, TwoByTwo(), path_, o);
  ASSERT_OK(r.status());
  ASSERT_OK(r->filter_status);
  ASSERT_EQ(r->candidates.size(), 13u);  // 12 records + the promoted line (the veto holds)
  EXPECT_EQ(r->candidates.back().line_no, 14);
  EXPECT_EQ(r->candidates.back().format, "embeddings-filter");
  EXPECT_EQ(r->candidates.back().segment, "promote gauge 42 widgets");
  EXPECT_EQ(r->candidates[11].line_no, 12);
  EXPECT_EQ(r->report.promoted_segments, 1u);
  for (size_t i = 1; i < r->candidates.size(); ++i) {
    EXPECT_LT(r->candidates[i - 1].line_no, r->candidates[i].line_no);
  }
}

TEST_F(FilteredScanTest, FailingEmbedderFallsBackToTheBuiltinResult) {
  ScriptedEmbedder emb(Axis);
  emb.fail = Status::DeadlineExceeded("timeout after 20 s");
  FilteredScanOptions o;
  o.collect_candidates = true;
  std::vector<int64_t> seen;
  auto r = ScanLogWithEmbeddingFilter(emb, TwoByTwo(), path_, o,
                                      [&](const ProgressRecord& p) { seen.push_back(p.line_no); });
  ASSERT_OK(r.status());
  EXPECT_EQ(r->filter_status.code(), StatusCode::kDeadlineExceeded);
  ASSERT_TRUE(r->scan.latest);
  EXPECT_EQ(r->scan.latest->line_no, 13);  // the built-in answer
  EXPECT_EQ(seen.size(), 13u);             // the built-in series, once
  EXPECT_EQ(r->candidates.size(), 13u);    // the built-in candidates
  EXPECT_EQ(FilterLabel(r->filter_status, r->embedder_name),
            "builtin (embeddings unavailable: timeout after 20 s)");
}

TEST_F(FilteredScanTest, MissingFileIsAnError) {
  ScriptedEmbedder emb(Axis);
  auto r = ScanLogWithEmbeddingFilter(emb, TwoByTwo(), dir_.File("nope.log"), {});
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(emb.calls.empty());
}

}  // namespace
}  // namespace schedmate::tracker
