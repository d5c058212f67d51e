#include "text/hash.h"

#include <gtest/gtest.h>

#include <string>

namespace schedmate::text {
namespace {

// Published FNV-1a 64-bit test vectors (the FNV reference's test suite).
TEST(Fnv1a64Test, MatchesTheReferenceVectors) {
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ULL);
}

TEST(Fnv1a64Test, StepsEqualTheWholeHashAndBytesAreUnsigned) {
  const std::string bytes = "loss=0.25 \xe2\x96\x88 step";
  uint64_t h = kFnv1aOffsetBasis;
  for (char c : bytes) Fnv1aStep(h, static_cast<unsigned char>(c));
  EXPECT_EQ(h, Fnv1a64(bytes));
  // A high byte folds in as 0xe2, not as a sign-extended value.
  uint64_t manual = (kFnv1aOffsetBasis ^ 0xe2ULL) * kFnv1aPrime;
  EXPECT_EQ(Fnv1a64("\xe2"), manual);
}

TEST(Fnv1a64Test, BasisStartsTheHashAndChains) {
  EXPECT_EQ(Fnv1a64("", 7), 7u);
  EXPECT_EQ(Fnv1a64("poch", Fnv1a64("e", kFeatureHashBasis)), Fnv1a64("epoch", kFeatureHashBasis));
  EXPECT_NE(Fnv1a64("epoch", kFeatureHashBasis ^ 1), Fnv1a64("epoch", kFeatureHashBasis ^ 2));
  static_assert(Fnv1a64("a") == 0xaf63dc4c8601ec8cULL, "usable at compile time");
}

// Schedmate's own basis: values pinned, since tuned thresholds and stored line indexes depend on
// them (computed independently from the FNV-1a definition).
TEST(Fnv1a64Test, FeatureHashBasisValuesArePinned) {
  EXPECT_EQ(kFeatureHashBasis, 0x14650fb0739d0383ULL);
  EXPECT_NE(kFeatureHashBasis, kFnv1aOffsetBasis);
  EXPECT_EQ(Fnv1a64("a", kFeatureHashBasis), 0x44bd8ad473cd9906ULL);
  EXPECT_EQ(Fnv1a64("epoch", kFeatureHashBasis ^ 1), 0xce07eb02887df603ULL);
}

TEST(Avalanche64Test, MixesHighBitsIntoLowBits) {
  // Inputs differing only in bit 63 differ in their low 32 bits after the avalanche.
  const uint64_t a = Avalanche64(1);
  const uint64_t b = Avalanche64(1 | (uint64_t{1} << 63));
  EXPECT_NE(a & 0xffffffffULL, b & 0xffffffffULL);
  EXPECT_EQ(Avalanche64(0), 0u);
}

}  // namespace
}  // namespace schedmate::text
