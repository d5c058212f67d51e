#include "advisor/duration_distribution.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/check.h"

namespace schedmate::advisor {
namespace {

// A logistic with scale s has standard deviation s * pi / sqrt(3); match a normal's.
constexpr double kLogisticPerSd = 0.5513288954217921;  // sqrt(3) / pi

double Log2Seconds(double s) { return std::log2(std::max(s, 1.0)); }

}  // namespace

DurationDistribution::DurationDistribution(const std::vector<std::pair<double, double>>& samples,
                                           double bandwidth)
    : scale_(std::max(bandwidth, 1e-3) * kLogisticPerSd) {
  SM_CHECK(!samples.empty()) << "a distribution needs at least one sample";
  std::vector<size_t> order(samples.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return samples[a].first < samples[b].first; });
  double total = 0;
  for (const auto& s : samples) total += std::max(s.second, 0.0);
  for (size_t i : order) {
    log2_.push_back(Log2Seconds(samples[i].first));
    weight_.push_back(total > 0 ? std::max(samples[i].second, 0.0) / total
                                : 1.0 / static_cast<double>(samples.size()));
  }
}

double DurationDistribution::Cdf(double seconds) const {
  const double x = Log2Seconds(seconds);
  double f = 0;
  for (size_t i = 0; i < log2_.size(); ++i) {
    f += weight_[i] / (1.0 + std::exp(-(x - log2_[i]) / scale_));
  }
  return std::clamp(f, 0.0, 1.0);
}

double DurationDistribution::Quantile(double q) const {
  q = std::clamp(q, 1e-4, 1 - 1e-4);
  // F is increasing; the q-quantile lies within 10 scales of the extreme samples.
  double lo = log2_.front() - 10 * scale_, hi = log2_.back() + 10 * scale_;
  for (int it = 0; it < 32; ++it) {
    const double mid = 0.5 * (lo + hi);
    double f = 0;
    for (size_t i = 0; i < log2_.size(); ++i) {
      f += weight_[i] / (1.0 + std::exp(-(mid - log2_[i]) / scale_));
    }
    (f < q ? lo : hi) = mid;
  }
  return std::exp2(0.5 * (lo + hi));
}

double DurationDistribution::WindowMass(double seconds) const {
  const double c = Log2Seconds(seconds);
  double m = 0;
  for (size_t i = 0; i < log2_.size(); ++i) {
    if (std::abs(log2_[i] - c) <= 1.0) m += weight_[i];
  }
  return m;
}

double DurationDistribution::WindowMode(double over_penalty) const {
  // Samples are sorted: a two-pointer sweep gives each candidate's window in O(n).
  const size_t n = log2_.size();
  std::vector<double> prefix(n + 1, 0);
  for (size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + weight_[i];
  size_t lo = 0, hi = 0;  // window [lo, hi) of samples within 1 of candidate c
  double best_score = -1e300, best = log2_.front();
  for (size_t k = 0; k < n; ++k) {
    const double c = log2_[k];
    while (log2_[lo] < c - 1.0) ++lo;
    if (hi < k) hi = k;
    while (hi < n && log2_[hi] <= c + 1.0) ++hi;
    const double score = (prefix[hi] - prefix[lo]) - over_penalty * prefix[lo];
    if (score > best_score + 1e-12) {
      best_score = score;
      best = c;
    }
  }
  return std::exp2(best);
}

void QuantileCalibrator::Record(double pit) {
  if (!(pit >= 0 && pit <= 1)) return;
  int b = std::min(kBins - 1, static_cast<int>(pit * kBins));
  ++hist_[b];
  ++n_;
}

double QuantileCalibrator::Level(double q) const {
  q = std::clamp(q, 1e-4, 1 - 1e-4);
  if (n_ < min_samples_) return q;
  // Smallest level u with ECDF(u) >= q, linear inside its bin.
  const double target = q * static_cast<double>(n_);
  double cum = 0;
  for (int b = 0; b < kBins; ++b) {
    const double c = static_cast<double>(hist_[b]);
    if (cum + c >= target && c > 0) {
      const double frac = (target - cum) / c;
      return std::clamp((b + frac) / kBins, 1e-4, 1 - 1e-4);
    }
    cum += c;
  }
  return 1 - 1e-4;
}

}  // namespace schedmate::advisor
