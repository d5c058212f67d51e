// llm::CheckEmbeddings: what every embedding answer must satisfy before it is indexed.
#include "llm/embedder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "testing/test_util.h"

namespace schedmate::llm {
namespace {

TEST(CheckEmbeddingsTest, FirstAnswerFixesTheDimensionAndLaterOnesMustMatch) {
  std::atomic<size_t> dim{0};
  std::vector<Embedding> a = {{3, 4}, {0, 0}};
  ASSERT_OK(CheckEmbeddings(a, 2, dim, /*normalise=*/true));
  EXPECT_EQ(dim.load(), 2u);
  EXPECT_FLOAT_EQ(a[0][0], 0.6f);  // unit length
  EXPECT_FLOAT_EQ(a[0][1], 0.8f);
  EXPECT_EQ(a[1], (Embedding{0, 0}));  // all-zero stays zero
  std::vector<Embedding> b = {{1, 2, 3}};
  Status s = CheckEmbeddings(b, 1, dim, true);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), "embedding dimension mismatch: expected 2, got 3");
}

TEST(CheckEmbeddingsTest, CountEmptyAndNonFiniteAreDataLoss) {
  std::atomic<size_t> dim{0};
  std::vector<Embedding> two = {{1}, {2}};
  EXPECT_EQ(CheckEmbeddings(two, 3, dim, false).message(),
            "embedding count mismatch: 3 inputs, 2 vectors");
  std::vector<Embedding> empty = {{1}, {}};
  EXPECT_EQ(CheckEmbeddings(empty, 2, dim, false).message(), "empty embedding for input 1");
  std::vector<Embedding> nan = {{std::numeric_limits<float>::quiet_NaN()}};
  EXPECT_EQ(CheckEmbeddings(nan, 1, dim, false).message(),
            "non-finite embedding component for input 0");
  // Without normalise the values are left as they came.
  std::vector<Embedding> raw = {{3}};
  ASSERT_OK(CheckEmbeddings(raw, 1, dim, false));
  EXPECT_EQ(raw[0], (Embedding{3}));
}

}  // namespace
}  // namespace schedmate::llm
