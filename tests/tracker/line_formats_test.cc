#include "tracker/line_formats.h"

#include <gtest/gtest.h>

#include <string>

#include "tracker/line_classifier.h"
#include "tracker/log_reader.h"
#include "tracker/metric_extractor.h"
#include "tracker/metric_tracker.h"
#include "tracker/vocabulary.h"

namespace schedmate::tracker {
namespace {

TEST(LineFormatsTest, BuiltinFileParsesAndHasUniqueIds) {
  const LineFormats& f = LineFormats::Builtin();
  ASSERT_GT(f.size(), 0u);
  for (size_t i = 0; i < f.size(); ++i) EXPECT_FALSE(f.Id(i).empty());
}

TEST(LineFormatsTest, BadEntriesAreErrorsNamingTheEntry) {
  auto parse = [](const std::string& body) {
    return LineFormats::Parse("version: 1\nformats:\n" + body, "t.yaml");
  };
  const std::string ok_fields = "    source: s\n    rewrite: 'step={n}'\n";
  EXPECT_TRUE(parse("  - id: a\n    pattern: '^(?P<n>\\d+)'\n" + ok_fields).ok());
  // Broken regex, a rewrite naming no group of the pattern, a duplicate id, a missing field.
  auto bad = parse("  - id: a\n    pattern: '^(?P<n>\\d+'\n" + ok_fields);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("formats[0]"), std::string::npos);
  EXPECT_FALSE(parse("  - id: a\n    pattern: '^(?P<m>\\d+)'\n" + ok_fields).ok());
  EXPECT_FALSE(parse("  - id: a\n    pattern: '^(?P<n>\\d+)'\n" + ok_fields +
                     "  - id: a\n    pattern: '^(?P<n>\\d+)x'\n" + ok_fields)
                   .ok());
  EXPECT_FALSE(parse("  - id: a\n    pattern: '^(?P<n>\\d+)'\n    rewrite: 'step={n}'\n").ok());
  EXPECT_FALSE(LineFormats::Parse("formats: [", "t.yaml").ok());
}

TEST(LineFormatsTest, RewriteLeavesOutPiecesWhoseGroupDidNotMatch) {
  auto f = LineFormats::Parse(
      "formats:\n  - id: a\n    source: s\n    pattern: '^(?P<n>\\d+)(?: e(?P<e>\\d+))?: "
      "(?P<l>[0-9.]+)'\n    rewrite: 'step={n}, epoch={e}, loss={l}'\n",
      "t.yaml");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  std::string out;
  int i = f->Find("12: 0.5");
  ASSERT_EQ(i, 0);
  ASSERT_TRUE(f->Rewrite(i, "12: 0.5", out));
  EXPECT_EQ(out, "step=12, loss=0.5");
  ASSERT_TRUE(f->Rewrite(i, "12 e3: 0.5", out));
  EXPECT_EQ(out, "step=12, epoch=3, loss=0.5");
  EXPECT_EQ(f->Find("loss: 0.5"), -1);
}

// darknet's iteration summaries, written from its printf format strings (detector.c,
// classifier.c); the numbers are made up.
TEST(LineFormatsTest, DarknetIterationSummariesAreProgress) {
  BuiltinLineClassifier classifier;
  BuiltinMetricExtractor extractor;
  auto run = [&](const std::string& text) {
    MetricTracker t(classifier, extractor);
    int64_t n = 1;
    ForEachPhysicalLine(text, [&](std::string_view l, uint64_t off) { t.AddLine(l, n++, off); });
    t.Finish();
    return t.Latest();
  };
  auto rec = run(
      "Region 82 Avg IOU: 0.850224, Class: 0.999750, Obj: 0.999815, No Obj: 0.001260, .5R: "
      "1.000000, .75R: 1.000000,  count: 2\n"
      "Region 94 Avg IOU: -nan, Class: -nan, Obj: -nan, No Obj: 0.000012, .5R: -nan, .75R: -nan, "
      " count: 0\n"
      "1200: 0.512345, 0.598765 avg, 0.001000 rate, 3.123456 seconds, 76800 images\n"
      "Loaded: 0.000043 seconds\n");
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->line_no, 3);
  EXPECT_EQ(rec->v.step, 1200);  // not an `srun --label` rank
  EXPECT_EQ(rec->rank, -1);
  ASSERT_TRUE(rec->v.loss);
  EXPECT_NEAR(*rec->v.loss, 0.512345, 1e-9);
  ASSERT_TRUE(rec->v.step_time_s);
  EXPECT_NEAR(*rec->v.step_time_s, 3.123456, 1e-9);
  EXPECT_EQ(rec->format, "known-format");
  // The classifier variant prints the epoch; AlexeyAB's fork adds " loss" and hours left.
  rec = run("812, 3.250: 2.5100, 2.6000 avg, 0.010000 rate, 0.250000 seconds, 104000 images\n");
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->v.step, 812);
  ASSERT_TRUE(rec->v.epoch);
  EXPECT_NEAR(*rec->v.epoch, 3.25, 1e-9);
  rec =
      run(" 4000: 1.234567, 1.300000 avg loss, 0.001000 rate, 2.500000 seconds, 256000 images, "
          "10.500000 hours left\n");
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->v.step, 4000);
  ASSERT_TRUE(rec->v.eta_s);
  EXPECT_NEAR(*rec->v.eta_s, 10.5 * 3600, 1e-6);
}

}  // namespace
}  // namespace schedmate::tracker

namespace schedmate::tracker {
namespace {

TEST(VocabularyTest, BuiltinFileParses) {
  const Vocabulary& v = Vocabulary::Builtin();
  EXPECT_TRUE(v.eval.Contains("val"));
  EXPECT_TRUE(v.step.Contains("iter"));
  EXPECT_TRUE(v.epoch.Contains("epoch"));
  EXPECT_FALSE(v.epoch.Contains("loss"));
}

TEST(VocabularyTest, EveryListIsRequiredAndWordsAreLowerCaseSingleWords) {
  std::string full(BuiltinVocabularyYaml());
  ASSERT_TRUE(Vocabulary::Parse(full, "v.yaml").ok());
  // An unknown list (a typo), a missing list, a word with a capital or a space, bad YAML.
  auto bad = Vocabulary::Parse(full + "  evl: [x]\n", "v.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("v.yaml:"), std::string::npos);
  EXPECT_FALSE(Vocabulary::Parse("version: 1\nwords:\n  eval: [val]\n", "v.yaml").ok());
  EXPECT_FALSE(Vocabulary::Parse(full + "  eval: [Val]\n", "v.yaml").ok());
  EXPECT_FALSE(Vocabulary::Parse("words: [", "v.yaml").ok());
}

}  // namespace
}  // namespace schedmate::tracker
