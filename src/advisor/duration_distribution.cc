#include "advisor/duration_distribution.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>

#include "advisor/fast_exp.h"
#include "core/check.h"

namespace schedmate::advisor {
namespace {

// A logistic with scale s has standard deviation s * pi / sqrt(3); match a normal's.
constexpr double kLogisticPerSd = 0.5513288954217921;  // sqrt(3) / pi

double Log2Seconds(double s) { return std::log2(std::max(s, 1.0)); }

// Bound, per sample (plus 8), on |CdfAt(x) - F(x)| in units of the weights' sum (1): each term
// w / (1 + exp(a)) carries a few roundings of relative size 2^-53 (the argument, exp within
// 1 ulp, the sum and the division; |a| x the logistic's slope stays below 1/2), and the sum one
// more per sample. 16x that, for margin.
constexpr double kCdfErrorPerSample = 16 * 4 * 1.1102230246251565e-16;

}  // namespace

DurationDistribution::DurationDistribution(const std::vector<std::pair<double, double>>& samples,
                                           double bandwidth)
    : scale_(std::max(bandwidth, 1e-3) * kLogisticPerSd) {
  SM_CHECK(!samples.empty()) << "a distribution needs at least one sample";
  // Stable order by duration: insertion sort (a tier holds a few dozen samples), moving a sample
  // only past strictly longer ones, so equal durations keep their input order.
  const size_t n = samples.size();
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) {
    size_t k = i;
    while (k > 0 && samples[i].first < samples[order[k - 1]].first) {
      order[k] = order[k - 1];
      --k;
    }
    order[k] = static_cast<uint32_t>(i);
  }
  double total = 0;
  for (const auto& s : samples) total += std::max(s.second, 0.0);
  log2_.reserve(n);
  weight_.reserve(n);
  for (uint32_t i : order) {
    log2_.push_back(Log2Seconds(samples[i].first));
    weight_.push_back(total > 0 ? std::max(samples[i].second, 0.0) / total
                                : 1.0 / static_cast<double>(n));
  }
}

DurationDistribution::DurationDistribution(std::vector<double> sorted_log2,
                                           std::vector<double> normalised_weights, double bandwidth)
    : log2_(std::move(sorted_log2)),
      weight_(std::move(normalised_weights)),
      scale_(std::max(bandwidth, 1e-3) * kLogisticPerSd) {
  SM_CHECK(!log2_.empty() && log2_.size() == weight_.size())
      << "a distribution needs at least one sample and one weight per sample";
}

double DurationDistribution::CdfAt(double x) const {
  double f = 0;
  for (size_t i = 0; i < log2_.size(); ++i) {
    f += weight_[i] / (1.0 + std::exp(-(x - log2_[i]) / scale_));
  }
  return f;
}

// Four samples a block, the last one padded with weight 0; vector code for AVX2 where the CPU
// has it (the approximation's bound holds for either clone; only the search's speed depends on
// this function, never a result).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
double
DurationDistribution::ApproxCdfAt(double x, double* density, double* slope) const {
  const size_t n = log2_.size();
  const double inv_scale = 1.0 / scale_;
  Double4 f{}, d{}, d2{};
  for (size_t i = 0; i < n; i += 4) {
    Double4 l, w;
    if (i + 4 <= n) {
      std::memcpy(&l, &log2_[i], sizeof l);
      std::memcpy(&w, &weight_[i], sizeof w);
    } else {
      l = Double4{} + x;  // padding: exp(0), weight 0
      w = Double4{};
      for (size_t j = 0; i + j < n; ++j) {
        l[j] = log2_[i + j];
        w[j] = weight_[i + j];
      }
    }
    Double4 e = (l - x) * inv_scale;
    ExpBlock(&e);  // exp(-(x - l) / scale)
    const Double4 s = 1.0 / (1.0 + e);
    const Double4 ws = w * s;
    f += ws;
    const Double4 k = ws * (e * s);  // w s(1 - s) for the logistic s
    d += k;
    d2 += k * ((e - 1.0) * s);  // w s(1 - s)(1 - 2s)
  }
  *density = ((d[0] + d[1]) + (d[2] + d[3])) * inv_scale;
  *slope = ((d2[0] + d2[1]) + (d2[2] + d2[3])) * inv_scale * inv_scale;
  return (f[0] + f[1]) + (f[2] + f[3]);
}

double DurationDistribution::Cdf(double seconds) const {
  return std::clamp(CdfAt(Log2Seconds(seconds)), 0.0, 1.0);
}

int DurationDistribution::CdfBin(double seconds, int bins) const {
  // |ApproxCdfAt - CdfAt| <= 2 eps + kExpBlockRelError (each is within its bound of the exact
  // F); the bin is a non-decreasing function of the value, so equal bins at both ends of that
  // interval are the exact value's bin.
  const double x = Log2Seconds(seconds);
  const double eps = kCdfErrorPerSample * static_cast<double>(log2_.size() + 8);
  const double margin = 2 * eps + kExpBlockRelError;
  double density = 0, slope = 0;
  const double f = ApproxCdfAt(x, &density, &slope);
  auto bin = [bins](double v) {  // -1: NaN, which Record ignores too
    if (std::isnan(v)) return -1;
    return std::min(bins - 1, static_cast<int>(std::clamp(v, 0.0, 1.0) * bins));
  };
  const int lo = bin(f - margin);
  if (lo == bin(f + margin)) return lo;
  return bin(CdfAt(x));
}

void DurationDistribution::Learn(double x, double f, double q, double margin, Bracket* br) {
  if (f < q - margin) br->lo = std::max(br->lo, x);
  if (f >= q + margin) br->hi = std::min(br->hi, x);
}

double DurationDistribution::Quantile(double q) const {
  double start = std::nan("");
  return Quantile(q, &start);
}

double DurationDistribution::Quantile(double q, double* root_log2) const {
  q = std::clamp(q, 1e-4, 1 - 1e-4);
  // The answer is defined by a 32-step bisection of the computed CdfAt over
  // [first - 10 scales, last + 10 scales] (F is increasing; the q-quantile lies in there).
  // Evaluating CdfAt at all 32 midpoints costs 32 x n exponentials, so a Newton search on the
  // cheaper ApproxCdfAt first finds points lo and hi close around the root with
  // G(lo) < q - margin and G(hi) >= q + margin, where G is the value used (CdfAt or
  // ApproxCdfAt), eps bounds |CdfAt(x) - F(x)| for the exact F and margin is |G - F|'s bound
  // plus eps. F being
  // increasing, every midpoint <= lo then has CdfAt < q and every midpoint >= hi has CdfAt >= q:
  // the bisection takes the same steps as with every CdfAt evaluated, and evaluates only
  // midpoints between the two (rarely any). The result is bit-identical to the plain bisection.
  const double lo0 = log2_.front() - 10 * scale_, hi0 = log2_.back() + 10 * scale_;
  const double eps = kCdfErrorPerSample * static_cast<double>(log2_.size() + 8);
  Bracket proven;
  NewtonBracket(q, lo0, hi0, eps, &proven, root_log2);
  double lo = lo0, hi = hi0;
  for (int it = 0; it < 32; ++it) {
    const double mid = 0.5 * (lo + hi);
    bool below;
    if (mid <= proven.lo) {
      below = true;
    } else if (mid >= proven.hi) {
      below = false;
    } else {
      const double f = CdfAt(mid);
      Learn(mid, f, q, 2 * eps, &proven);
      below = f < q;
    }
    (below ? lo : hi) = mid;
  }
  return std::exp2(0.5 * (lo + hi));
}

void DurationDistribution::NewtonBracket(double q, double a, double b, double eps, Bracket* proven,
                                         double* start) const {
  // Start at the hint or the samples' weighted q-quantile; Newton steps, bisecting the bracket
  // [a, b] when a step would leave it. Only the speed depends on this search, never the result.
  double x = *start;
  if (!(x > a && x < b)) {
    double cum = 0;
    x = log2_.back();
    for (size_t i = 0; i < log2_.size(); ++i) {
      cum += weight_[i];
      if (cum >= q) {
        x = log2_[i];
        break;
      }
    }
  }
  RefineBracket(q, a, b, eps, proven, &x);
  *start = x;
}

void DurationDistribution::RefineBracket(double q, double a, double b, double eps, Bracket* proven,
                                         double* root) const {
  // ApproxCdfAt is within eps + kExpBlockRelError of F, a midpoint's CdfAt within eps: a point
  // whose approximate value clears q by their sum is on its side for every midpoint beyond it.
  const double margin = 2 * eps + kExpBlockRelError;
  double& x = *root;
  double density = 0, miss = 0;  // miss: how far x may still be from the root (log2 s)
  for (int it = 0; it < 16 && b > a; ++it) {
    double slope = 0;
    const double f = ApproxCdfAt(x, &density, &slope);
    Learn(x, f, q, margin, proven);
    if (std::abs(f - q) < margin) break;
    (f < q ? a : b) = x;
    // Halley's step (Newton's when the curvature term would flip it).
    const double r = f - q, halley = 2 * density * density - r * slope;
    double next = density > 0
                      ? x - (halley > density * density ? 2 * r * density / halley : r / density)
                      : 0.5 * (a + b);
    if (!(next > a && next < b)) next = 0.5 * (a + b);
    if (next == x) break;
    if (std::abs(f - q) < 1e-7 && density > 0 && next != 0.5 * (a + b)) {
      // Close enough: take the last Newton step unevaluated; its error is second order.
      const double step = (f - q) / density;
      miss = step * step / scale_;
      x = next;
      break;
    }
    x = next;
  }
  if (!(density > 0)) return;
  // Probe both sides of the root where F has moved by a few margins, further if that was too
  // close.
  double delta = std::max(4 * margin / density + 4 * miss, 1e-13 * (1 + std::abs(x)));
  double unused_density = 0, unused_slope = 0;
  auto probe = [&](double at) {
    Learn(at, ApproxCdfAt(at, &unused_density, &unused_slope), q, margin, proven);
  };
  for (int tries = 0; tries < 3; ++tries, delta *= 16) {
    if (proven->lo < x - delta) probe(x - delta);
    if (proven->hi > x + delta) probe(x + delta);
    if (proven->lo >= x - delta && proven->hi <= x + delta) break;
  }
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
  return WindowModeOf(log2_.data(), weight_.data(), log2_.size(), over_penalty);
}

double DurationDistribution::WindowModeOf(const double* log2_, const double* weight_, size_t n,
                                          double over_penalty) {
  // Samples are sorted: a two-pointer sweep gives each candidate's window in O(n). below_lo and
  // below_hi are the weights' prefix sums before lo and hi, added in sample order.
  size_t lo = 0, hi = 0;  // window [lo, hi) of samples within 1 of candidate c
  double below_lo = 0, below_hi = 0;
  double best_score = -1e300, best = log2_[0];
  for (size_t k = 0; k < n; ++k) {
    const double c = log2_[k];
    while (log2_[lo] < c - 1.0) below_lo += weight_[lo++];
    while (hi < k) below_hi += weight_[hi++];
    while (hi < n && log2_[hi] <= c + 1.0) below_hi += weight_[hi++];
    const double score = (below_hi - below_lo) - over_penalty * below_lo;
    if (score > best_score + 1e-12) {
      best_score = score;
      best = c;
    }
  }
  return std::exp2(best);
}

void QuantileCalibrator::Record(double pit) {
  if (!(pit >= 0 && pit <= 1)) return;
  RecordBin(BinOf(pit));
}

void QuantileCalibrator::RecordBin(int b) {
  if (b < 0 || b >= kBins) return;
  ++hist_[b];
  for (int i = b + 1; i <= kBins; i += i & -i) ++tree_[i];
  ++n_;
}

double QuantileCalibrator::Level(double q) const {
  q = std::clamp(q, 1e-4, 1 - 1e-4);
  if (n_ < min_samples_) return q;
  // Smallest level u with ECDF(u) >= q, linear inside its bin: the first bin b whose cumulative
  // count reaches the target (it is not empty, the target being > 0), found by descending the
  // Fenwick tree to the longest prefix whose count stays below the target. Counts are integers,
  // exact in doubles, so this is the same bin and fraction as a scan from the first bin.
  const double target = q * static_cast<double>(n_);
  int pos = 0;
  int64_t cum = 0;
  for (int step = kTreeTop; step > 0; step >>= 1) {
    const int next = pos + step;
    if (next <= kBins && static_cast<double>(cum + tree_[next]) < target) {
      pos = next;
      cum += tree_[next];
    }
  }
  if (pos >= kBins) return 1 - 1e-4;
  const double c = static_cast<double>(hist_[pos]);
  const double frac = (target - static_cast<double>(cum)) / c;
  return std::clamp((pos + frac) / kBins, 1e-4, 1 - 1e-4);
}

}  // namespace schedmate::advisor
