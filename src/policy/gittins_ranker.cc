#include "policy/gittins_ranker.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace schedmate::policy {
namespace {

constexpr double kMinLog10 = -4.0;

// The lower edge of histogram bin `bin`, by the library's pow at run time: not inlined, so the
// compiler cannot fold it for a constant bin (its folding may round differently).
[[gnu::noinline]] double EdgeOf(int bin) {
  return std::pow(10.0, kMinLog10 + static_cast<double>(bin) / GittinsRanker::kBinsPerDecade);
}

// The bins' lower edges and the histogram's top (the upper edge of its last bin), computed once:
// Rank() reads them on every call.
struct Edges {
  std::array<double, GittinsRanker::kBins> lower;
  double top;
  Edges() {
    for (int b = 0; b < GittinsRanker::kBins; ++b) lower[b] = EdgeOf(b);
    top = lower[GittinsRanker::kBins - 1] * std::pow(10.0, 1.0 / GittinsRanker::kBinsPerDecade);
  }
};

const Edges& TheEdges() {
  static const Edges edges;
  return edges;
}

}  // namespace

GittinsRanker::GittinsRanker() : GittinsRanker(std::vector<PriorSample>{}) {}

GittinsRanker::GittinsRanker(const std::vector<PriorSample>& prior) {
  bool any = false;
  for (const PriorSample& p : prior) {
    if (!(p.ratio > 0) || !std::isfinite(p.ratio) || !(p.weight > 0) || !std::isfinite(p.weight))
      continue;
    const int b = BinOf(p.ratio);
    count_[b] += p.weight;
    sum_[b] += p.weight * p.ratio;
    any = true;
  }
  if (!any) {  // one pseudo-sample at R = 1
    const int b = BinOf(1.0);
    count_[b] += 1.0;
    sum_[b] += 1.0;
  }
  Recompute();
}

int GittinsRanker::BinOf(double ratio) {
  const double l = (std::log10(ratio) - kMinLog10) * kBinsPerDecade;
  if (!(l > 0)) return 0;  // also NaN
  return std::min(kBins - 1, static_cast<int>(l));
}

double GittinsRanker::LowerEdge(int bin) { return TheEdges().lower[bin]; }

void GittinsRanker::Observe(double ratio) {
  if (!(ratio > 0) || !std::isfinite(ratio)) return;
  const int b = BinOf(ratio);
  count_[b] += 1.0;
  sum_[b] += ratio;
  ++samples_;
  if (samples_ - samples_at_compute_ >= std::max<int64_t>(16, samples_at_compute_ / 16)) {
    Recompute();
  }
}

void GittinsRanker::Recompute() {
  rank_at_edge_.assign(kBins, 0.0);
  // Non-empty bins in ratio order: mass c at value r (the bin's mean).
  std::vector<double> c, r;
  for (int b = 0; b < kBins; ++b) {
    if (count_[b] > 0) {
      c.push_back(count_[b]);
      r.push_back(sum_[b] / count_[b]);
    }
  }
  const size_t n = c.size();
  for (int e = 0; e < kBins; ++e) {
    const double x = e == 0 ? 0.0 : LowerEdge(e);
    // Survivors: masses with r > x (r is increasing along the list).
    const size_t k = static_cast<size_t>(std::upper_bound(r.begin(), r.end(), x) - r.begin());
    if (k == n) {
      rank_at_edge_[e] = std::max(x, 1e-9);  // outlived everything seen: doubling rule
      continue;
    }
    double total = 0;
    for (size_t i = k; i < n; ++i) total += c[i];
    // Quantum ending at r[j]: investment = sum_{i<=j} c_i (r_i - x) + (mass above j)(r_j - x),
    // completions = sum_{i<=j} c_i.
    double done_mass = 0, done_work = 0, best = std::numeric_limits<double>::infinity();
    for (size_t j = k; j < n; ++j) {
      done_mass += c[j];
      done_work += c[j] * (r[j] - x);
      const double investment = done_work + (total - done_mass) * (r[j] - x);
      best = std::min(best, investment / done_mass);
    }
    rank_at_edge_[e] = std::max(best, 1e-9);
  }
  samples_at_compute_ = samples_;
  ++version_;
}

double GittinsRanker::Rank(double x) {
  double lo = 0, hi = 0;
  return Rank(x, &lo, &hi);
}

double GittinsRanker::Rank(double x, double* lo, double* hi) const {
  const double top = TheEdges().top;
  if (x >= top) {
    *lo = *hi = x;  // beyond the histogram the rank is x itself
    return x;
  }
  const int b = x > 0 ? BinOf(x) : 0;
  *lo = b == 0 ? 0.0 : LowerEdge(b);
  *hi = b + 1 < kBins ? LowerEdge(b + 1) : top;
  return rank_at_edge_[b];
}

}  // namespace schedmate::policy
