#pragma once
// GittinsRanker: the Gittins rank of a job from how wrong duration estimates have been so far.
//
// Model. A job's run time is D = E x R: its estimate E times an error ratio R drawn from one
// distribution, learnt online from finished jobs (Observe(actual / estimate)). A job that has run
// for a = x E is then known to have R > x. Its Gittins rank (Gittins, 1989; for M/G/1 mean
// response time: Aalto, Ayesta and Righter, 2009; Scully et al., SIGMETRICS'18, "SOAP") is
//
//   rank(x) = E x min over y > x of  E[min(R, y) - x | R > x] / P(R <= y | R > x)
//
// the least expected further run time per unit of probability of finishing, over every amount
// of further service y - x one could grant. Serving the lowest rank first minimises mean
// response time on one server when only the distribution is known. Two limits show why it fits
// estimates: with exact estimates (R = 1) it is the remaining time E - a (SRPT); with
// uninformative ones it ages like least-attained-service, because a job that has outlived most of
// the jobs like it is likely to be a long one.
//
// Representation. Ratios go into 32 log-spaced bins per decade over [1e-4, 1e4] (clamped), each
// bin keeping its count and sum so its mass sits at its mean. Ranks are precomputed at every bin
// edge (O(bins^2)) and answered by the bin of x; Observe recomputes them when the number of
// samples has grown by max(16, n/16) since the last computation: O(log n) recomputations (about
// 90 for 24,000 jobs), ranks lag at most 1/16 of the evidence, and they do not depend on when
// they are asked for.
// Prior: by default one pseudo-sample at R = 1 (trust the estimator until told otherwise);
// callers may pass weighted pseudo-samples instead (the schedmate policy: the quantiles of the
// job's predicted distribution). When no sample
// exceeds x the job has outlived everything seen: rank(x) = x (expected further run time equal
// to the time already run, the Pareto tail with index 2, the classic doubling rule).
// Determinism: pure function of the observed sequence. Not thread-safe.

#include <array>
#include <cstdint>
#include <vector>

namespace schedmate::policy {

// One prior pseudo-sample: an error ratio and its weight (> 0).
struct PriorSample {
  double ratio = 1.0;
  double weight = 1.0;
};

class GittinsRanker {
 public:
  // The default prior: one pseudo-sample at R = 1.
  GittinsRanker();
  // A prior of weighted pseudo-samples (invalid ones are ignored; none valid: the default).
  explicit GittinsRanker(const std::vector<PriorSample>& prior);
  // Records one finished job's actual / estimated run time (> 0; others are ignored).
  void Observe(double ratio);
  // Rank of a job that has run `x` (>= 0) of its estimate, in units of its estimate. Positive.
  double Rank(double x);
  // Rank(x), and the ratios [*lo, *hi) around x that share it until the next recomputation
  // (empty, *lo == *hi, where the rank varies continuously). Lets callers cache ranks.
  double Rank(double x, double* lo, double* hi) const;
  // Changes whenever the ranks are recomputed.
  int64_t version() const { return version_; }
  // Observed samples (not counting the prior).
  int64_t samples() const { return samples_; }

  static constexpr int kBinsPerDecade = 32;
  static constexpr int kDecades = 8;  // 1e-4 .. 1e4
  static constexpr int kBins = kBinsPerDecade * kDecades;

 private:
  static int BinOf(double ratio);
  static double LowerEdge(int bin);
  void Recompute();
  std::array<double, kBins> count_{};
  std::array<double, kBins> sum_{};
  std::vector<double> rank_at_edge_;  // rank at LowerEdge(b), b = 0..kBins-1
  int64_t samples_ = 0;
  int64_t samples_at_compute_ = 0;
  int64_t version_ = 0;
};

}  // namespace schedmate::policy
