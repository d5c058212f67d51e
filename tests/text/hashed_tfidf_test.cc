#include "text/hashed_tfidf.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace schedmate::text {
namespace {

using V = std::vector<std::string>;

double Norm(const HashedTfIdf::Sparse& v) {
  double s = 0;
  for (const auto& [k, w] : v) s += static_cast<double>(w) * w;
  return std::sqrt(s);
}

TEST(MaskedWordsTest, LowerCasesSplitsCamelCaseAndMasksDigitRuns) {
  EXPECT_EQ(MaskedWords("Epoch 12/200 trainLoss=0.25"),
            (V{"epoch", "#", "#", "train", "loss", "#", "#"}));
  EXPECT_EQ(MaskedWords("step12x3"), (V{"step#x#"}));
  EXPECT_TRUE(MaskedWords("--- ... |").empty());
  // Bounded: at most 64 words.
  std::string many;
  for (int i = 0; i < 100; ++i) many += "w ";
  EXPECT_EQ(MaskedWords(many).size(), 64u);
}

// The bucket of a feature is pinned: the tracker's prototypes and exemplars were tuned on it.
TEST(HashedTfIdfTest, BucketsArePinned) {
  const HashedTfIdf h;
  const std::vector<uint32_t> f = h.Features("epoch <*> step #/# loss=#.#");
  EXPECT_EQ(f, (std::vector<uint32_t>{3329, 2045, 1079, 3045, 527}));
}

TEST(HashedTfIdfTest, FeaturesAreBucketsInRangeAndPairsCount) {
  HashedTfIdf h(64);
  const std::vector<uint32_t> f = h.WordFeatures(V{"a", "b", "c"}, V{"<bar>"});
  ASSERT_EQ(f.size(), 3u + 2u + 1u);  // unigrams, adjacent pairs, extra
  for (uint32_t b : f) EXPECT_LT(b, 64u);
  EXPECT_EQ(h.Features("A b c", V{"<bar>"}), f);
}

TEST(HashedTfIdfTest, VectorsAreSortedUnitLengthAndDeterministic) {
  HashedTfIdf h;
  const auto v = h.Vectorize(h.Features("loss 0.25 loss 0.3 step 7"));
  ASSERT_FALSE(v.empty());
  EXPECT_NEAR(Norm(v), 1.0, 1e-6);
  for (size_t i = 1; i < v.size(); ++i) EXPECT_LT(v[i - 1].first, v[i].first);
  EXPECT_EQ(v, h.Vectorize(h.Features("loss 0.25 loss 0.3 step 7")));
  EXPECT_TRUE(h.Vectorize({}).empty());
}

TEST(HashedTfIdfTest, SimilarTextsAreCloserAndFitDownweightsCommonWords) {
  HashedTfIdf h;
  const auto a = h.Vectorize(h.Features("epoch 3 step 10 loss 0.5"));
  const auto b = h.Vectorize(h.Features("epoch 4 step 20 loss 0.4"));
  const auto c = h.Vectorize(h.Features("Traceback most recent call last"));
  EXPECT_NEAR(SparseCosine(a, b), 1.0, 1e-6);  // digits are masked: same words
  EXPECT_NEAR(SparseCosine(a, a), 1.0, 1e-6);
  EXPECT_LT(SparseCosine(a, c), 0.1);

  // "loss" in every document: after Fit it weighs less than the rare "oom".
  HashedTfIdf fitted;
  fitted.Fit({fitted.Features("loss x"), fitted.Features("loss y"), fitted.Features("loss oom")});
  const auto v = fitted.Vectorize(fitted.WordFeatures(V{"loss", "oom"}));
  const auto unigram = fitted.WordFeatures(V{"loss", "oom"});
  float loss_w = 0, oom_w = 0;
  for (const auto& [k, w] : v) {
    if (k == unigram[0]) loss_w = w;
    if (k == unigram[2]) oom_w = w;  // [0] loss, [1] "loss oom", [2] oom
  }
  EXPECT_GT(oom_w, loss_w);
}

TEST(PrototypeSetTest, ScoresFavourTheClassOfSimilarExamples) {
  HashedTfIdf h;
  PrototypeSet p(2);
  p.Add(0, h.Vectorize(h.Features("step 1 loss 0.5")));
  p.Add(0, h.Vectorize(h.Features("step 2 loss 0.4 lr 0.1")));
  p.Add(1, h.Vectorize(h.Features("CUDA error out of memory")));
  p.Add(7, h.Vectorize(h.Features("ignored: no such class")));
  p.Normalize();
  const std::vector<float> s = p.Scores(h.Vectorize(h.Features("step 9 loss 0.1")));
  ASSERT_EQ(s.size(), 2u);
  EXPECT_GT(s[0], s[1]);
  EXPECT_GT(s[0], 0.5f);
}

}  // namespace
}  // namespace schedmate::text
