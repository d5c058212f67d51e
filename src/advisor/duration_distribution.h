#pragma once
// DurationDistribution and QuantileCalibrator: the predictive distribution of a job's run time
// that HistoryEstimator builds from its evidence, and the online recalibration of its quantiles.
//
// DurationDistribution. A weighted mixture in log2(seconds): each past job contributes a kernel
// (logistic, scale matched to a normal of standard deviation `bandwidth` log2 units) centred on
// log2 of its (work-scaled) duration, with the weight the estimator gave it (recency). Durations
// are right-skewed and span six decades, so log space is where a symmetric kernel makes sense.
// Queries: Cdf (share of mass at or below a duration), Quantile (inverse, by bisection), and
// WindowMode: the centre c of the densest factor-2 window [c/2, 2c] of the samples, with a
// penalty `over_penalty` on mass below c/2 (estimates more than 2x too high), i.e. the point
// that maximises the expected share of "within x2" predictions when over-estimation is costed
// extra. A group of durations is often bimodal (runs that finish vs. runs cancelled or crashed
// early); its median can fall between the modes, the window mode does not.
//
// QuantileCalibrator. Online quantile recalibration (Kuleshov, Fenner and Ermon, ICML 2018):
// for each finished job whose distribution was predicted, the probability integral transform
// u = F(actual) is recorded in a histogram; a nominal level q is then mapped to the level whose
// empirical PIT share is q. With a calibrated model u is uniform and the map is the identity;
// with an over-confident one (too narrow) the map pushes p10/p90 outwards. It learns only from
// jobs that have finished (no future leak) and holds no per-job state.
//
// Determinism: pure functions of their inputs and of the order of Record() calls.
// Thread-safety: none.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace schedmate::advisor {

class DurationDistribution {
 public:
  // `samples`: (duration in s (values below 1 s count as 1 s), weight > 0); at least one.
  // `bandwidth`: kernel scale in log2 units (> 0).
  DurationDistribution(const std::vector<std::pair<double, double>>& samples, double bandwidth);
  // The same distribution from what that constructor computes: log2 of each duration (of at
  // least 1 s) in ascending order of duration, equal durations in input order, and the weights
  // in that order, each divided by the sum of all weights (summed in input order). For callers
  // that order their samples more cheaply; at least one sample.
  DurationDistribution(std::vector<double> sorted_log2, std::vector<double> normalised_weights,
                       double bandwidth);

  // P(D <= seconds).
  double Cdf(double seconds) const;
  // min(bins - 1, floor(Cdf(seconds) * bins)), the histogram bin of Cdf(seconds), exactly; from
  // the approximate CDF unless its error bound straddles a bin edge (then from Cdf).
  int CdfBin(double seconds, int bins) const;
  // The q-quantile in seconds, q in (0, 1) (clamped to [1e-4, 1 - 1e-4]).
  double Quantile(double q) const;
  // The same, with *root_log2 as where the search starts (NaN: the samples' weighted quantile)
  // and, on return, where the root was found: a caller asking for nearby levels of the same
  // distribution again saves work. The result never depends on the hint.
  double Quantile(double q, double* root_log2) const;
  // The sample value c maximising mass(|log2 v - log2 c| <= 1) - over_penalty * mass(v < c/2)
  // over the samples (ties: the smaller c). Mass here is the samples' weights, without kernel.
  double WindowMode(double over_penalty) const;
  // WindowMode of n samples given as the constructor from sorted samples takes them.
  static double WindowModeOf(const double* sorted_log2, const double* normalised_weights, size_t n,
                             double over_penalty);
  // Weighted share of samples within a factor 2 of `seconds`.
  double WindowMass(double seconds) const;
  size_t size() const { return log2_.size(); }

 private:
  // Points known to lie below (CdfAt < q) and above (CdfAt >= q) the q-quantile.
  struct Bracket {
    double lo = -1e308, hi = 1e308;
  };
  // The mixture's CDF at log2 seconds x, unclamped (the bisection's function).
  double CdfAt(double x) const;
  // CdfAt with exp() by ExpBlock (fast_exp.h), four samples at a time, with the density and its
  // slope: within `eps + kExpBlockRelError` of the exact CDF when CdfAt is within eps.
  double ApproxCdfAt(double x, double* density, double* slope) const;
  // Records x as below (f < q - margin) or above (f >= q + margin) the q-quantile, where margin
  // covers the error of f plus that of CdfAt at the bisection's midpoints.
  static void Learn(double x, double f, double q, double margin, Bracket* br);
  // Narrows `proven` around the q-quantile by Newton steps from the weighted sample quantile.
  // *x: the start (NaN: none) and, on return, the root found. eps: CdfAt's error bound.
  void NewtonBracket(double q, double a, double b, double eps, Bracket* proven, double* x) const;
  // Newton steps from *root, then probes on both sides of it.
  void RefineBracket(double q, double a, double b, double eps, Bracket* proven, double* root) const;

  std::vector<double> log2_;    // sorted ascending
  std::vector<double> weight_;  // normalised to sum 1, same order
  double scale_;                // logistic scale in log2 units
};

class QuantileCalibrator {
 public:
  // `min_samples`: below this many recorded PITs, Level(q) == q.
  explicit QuantileCalibrator(int64_t min_samples = 50) : min_samples_(min_samples) {}
  // Records one finished job's PIT value u = F(actual), in [0, 1].
  void Record(double pit);
  // The same by the value's bin (BinOf(pit)), e.g. from DurationDistribution::CdfBin.
  void RecordBin(int bin);
  static int BinOf(double pit) { return std::min(kBins - 1, static_cast<int>(pit * kBins)); }
  // The nominal level whose empirical PIT share is q (the identity until min_samples).
  double Level(double q) const;
  int64_t samples() const { return n_; }

  static constexpr int kBins = 1000;

 private:
  static constexpr int kTreeTop = 512;  // the largest power of 2 <= kBins
  std::vector<int64_t> hist_ = std::vector<int64_t>(kBins, 0);
  std::vector<int64_t> tree_ = std::vector<int64_t>(kBins + 1, 0);  // Fenwick tree over hist_
  int64_t n_ = 0;
  int64_t min_samples_;
};

}  // namespace schedmate::advisor
