#include "text/hashed_tfidf_embedder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/test_util.h"
#include "text/hashed_tfidf.h"

namespace schedmate::text {
namespace {

double Dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

TEST(HashedTfIdfEmbedderTest, UnitVectorsOfOneDimensionSimilarShapesCloser) {
  const HashedTfIdfEmbedder h;
  EXPECT_EQ(h.Name(), "hashing");
  EXPECT_EQ(h.Dimension(), HashedTfIdf::kDefaultDimension);
  std::vector<std::string> t = {"epoch <*> step <*> loss=#.#", "epoch <*> step <*> loss #.#",
                                "Saving checkpoint to <*>", "<*> ..."};
  auto r = h.Embed(t);
  ASSERT_OK(r.status());
  ASSERT_EQ(r->size(), 4u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*r)[i].size(), h.Dimension());
    EXPECT_NEAR(Dot((*r)[i], (*r)[i]), 1.0, 1e-5);
  }
  EXPECT_EQ(Dot((*r)[3], (*r)[3]), 0.0);  // no words: the zero vector
  EXPECT_GT(Dot((*r)[0], (*r)[1]), Dot((*r)[0], (*r)[2]));
}

TEST(HashedTfIdfEmbedderTest, DenseFormOfTheSparseVectorWhateverSharesTheRequest) {
  const HashedTfIdfEmbedder h;
  const HashedTfIdf tfidf;
  const std::string line = "Epoch 3 trainLoss 0.25";
  std::vector<float> want(tfidf.dimension(), 0.0f);
  for (const auto& [i, x] : tfidf.Vectorize(tfidf.Features(line))) want[i] = x;
  auto alone = h.Embed(std::vector<std::string>{line});
  auto shared = h.Embed(std::vector<std::string>{"other words here", line});
  ASSERT_OK(alone.status());
  ASSERT_OK(shared.status());
  EXPECT_EQ((*alone)[0], want);
  EXPECT_EQ((*shared)[1], want);
}

}  // namespace
}  // namespace schedmate::text
