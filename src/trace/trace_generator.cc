#include "trace/trace_generator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/rng.h"
#include "trace/trace_reader.h"

namespace schedmate::trace {

Result<GeneratedTrace> GenerateTrace(const JobTable& source, const GenerateOptions& options) {
  const size_t n = source.jobs.size();
  if (n < 2) {
    return Status::InvalidArgument(
        fmt::format("need at least 2 source jobs to sample from, {} has {}", source.source, n));
  }
  if (std::none_of(source.jobs.begin(), source.jobs.end(),
                   [](const JobRecord& j) { return j.duration > Duration::Zero(); })) {
    return Status::InvalidArgument(fmt::format("{} ({} format) has no job durations to sample",
                                               source.source, TraceFormatName(source.format)));
  }
  if (options.jobs < 0) return Status::InvalidArgument("number of jobs must be >= 0");
  const int scalings = options.load_factor.has_value() + options.span_days.has_value() +
                       options.cluster_gpus.has_value();
  if (scalings > 1) {
    return Status::InvalidArgument(
        "give at most one of load factor, span in days, or cluster GPUs");
  }
  // Source gaps in submit order (stable: ties keep file order, gap 0).
  std::vector<int64_t> submits;
  submits.reserve(n);
  long double gd_sum = 0;  // sum of gpus * duration (GPU-microseconds)
  for (const auto& j : source.jobs) {
    submits.push_back(j.submit.micros());
    gd_sum += static_cast<long double>(j.gpus.milli()) / GpuAmount::kUnit * j.duration.micros();
  }
  std::stable_sort(submits.begin(), submits.end());
  std::vector<int64_t> gaps(n - 1);
  for (size_t i = 1; i < n; ++i) gaps[i - 1] = submits[i] - submits[i - 1];
  const double mean_gap_us =
      static_cast<double>(submits.back() - submits.front()) / static_cast<double>(n - 1);
  if (mean_gap_us <= 0) {
    return Status::InvalidArgument(fmt::format(
        "{}: every job has the same submit time; no inter-arrival gaps to sample", source.source));
  }
  const double mean_gd_us = static_cast<double>(gd_sum / n);

  GeneratedTrace out;
  out.source_offered_gpus = mean_gd_us / mean_gap_us;
  double L = 1;
  if (options.load_factor) {
    L = *options.load_factor;
  } else if (options.span_days) {
    if (!(*options.span_days > 0)) return Status::InvalidArgument("span in days must be > 0");
    const double gaps_needed = std::max<double>(1, static_cast<double>(options.jobs - 1));
    L = mean_gap_us * gaps_needed / (*options.span_days * 86400e6);
  } else if (options.cluster_gpus) {
    if (*options.cluster_gpus <= 0) return Status::InvalidArgument("cluster GPUs must be > 0");
    if (!(options.target_load > 0)) return Status::InvalidArgument("target load must be > 0");
    if (mean_gd_us <= 0) {
      return Status::InvalidArgument("source jobs use no GPU time; cannot target a load");
    }
    L = options.target_load * static_cast<double>(*options.cluster_gpus) * mean_gap_us / mean_gd_us;
  }
  if (!(L > 0) || !std::isfinite(L)) {
    return Status::InvalidArgument(fmt::format("load factor must be > 0, got {}", L));
  }
  out.load_factor = L;
  out.offered_gpus = out.source_offered_gpus * L;

  JobTable& t = out.table;
  t.source = fmt::format("generated from {} (seed {}, load factor {:.6g})", source.source,
                         options.seed, L);
  t.format = TraceFormat::kLucid;
  t.jobs.reserve(static_cast<size_t>(options.jobs));
  Rng rng(options.seed);
  long double clock_us = 0;
  for (int64_t i = 0; i < options.jobs; ++i) {
    const int64_t gap = gaps[rng.Below(gaps.size())];
    if (i > 0) clock_us += static_cast<long double>(gap) / L;
    if (clock_us > static_cast<long double>(kMaxTraceSeconds) * 1e6L) {
      return Status::InvalidArgument(fmt::format(
          "generated submit times pass {} s (job {} of {}, load factor {:.6g}); raise the load "
          "factor or generate fewer jobs",
          kMaxTraceSeconds, i + 1, options.jobs, L));
    }
    const JobRecord& src = source.jobs[rng.Below(n)];
    JobRecord& j = t.jobs.emplace_back();
    j.id = std::to_string(i + 1);
    j.user = src.user;
    j.account = src.account;
    j.qos = src.qos;
    j.vc = options.single_vc ? *options.single_vc : src.vc;
    j.gpus = src.gpus;
    j.cpus = src.cpus;
    j.nodes = src.nodes;
    j.submit = SimTime::FromMicros(static_cast<int64_t>(std::llround(clock_us)));
    j.duration = src.duration;
    j.time_limit = src.time_limit;
    j.state = src.state;
    j.model = src.model;
    j.dataset = src.dataset;
    j.batch_size = src.batch_size;
    j.amp = src.amp;
    j.iterations = src.iterations;
    j.speed = src.speed;
    j.gpu_util = src.gpu_util;
    j.gmem_util = src.gmem_util;
    j.gmem_mib = src.gmem_mib;
  }
  t.rows_read = options.jobs;
  return out;
}

Result<std::string> FormatVcConfigFor(const JobTable& table, int64_t cluster_gpus,
                                      int32_t gpus_per_node) {
  if (gpus_per_node <= 0) return Status::InvalidArgument("GPUs per node must be > 0");
  if (cluster_gpus < gpus_per_node) {
    return Status::InvalidArgument(fmt::format("cluster of {} GPUs is smaller than one node of {}",
                                               cluster_gpus, gpus_per_node));
  }
  struct Demand {
    long double gpu_us = 0;
    int64_t max_milli = 0;
  };
  std::map<std::string, Demand> by_vc;  // sorted by name: deterministic
  long double total = 0;
  for (const auto& j : table.jobs) {
    if (j.vc.empty()) {
      return Status::InvalidArgument(
          fmt::format("job {} has no VC; a VC config needs every job in a named VC", j.id));
    }
    Demand& d = by_vc[j.vc];
    const long double w = static_cast<long double>(j.gpus.milli()) * j.duration.micros();
    d.gpu_us += w;
    total += w;
    d.max_milli = std::max(d.max_milli, j.gpus.milli());
  }
  if (by_vc.empty()) return Status::InvalidArgument("no jobs: nothing to size a VC config for");
  const int64_t nodes_total = cluster_gpus / gpus_per_node;
  struct Share {
    std::string vc;
    int64_t nodes;
    long double rem;
    int64_t min_nodes;
  };
  std::vector<Share> shares;
  int64_t assigned = 0;
  for (const auto& [vc, d] : by_vc) {
    const long double exact = total > 0 ? d.gpu_us / total * nodes_total
                                        : static_cast<long double>(nodes_total) / by_vc.size();
    const int64_t whole = static_cast<int64_t>(std::floor(exact));
    const int64_t min_nodes =
        std::max<int64_t>(1, (d.max_milli + gpus_per_node * GpuAmount::kUnit - 1) /
                                 (gpus_per_node * GpuAmount::kUnit));
    shares.push_back({vc, whole, exact - whole, min_nodes});
    assigned += whole;
  }
  // Largest remainder, ties by name (shares is in name order; stable sort keeps it).
  std::vector<size_t> order(shares.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return shares[a].rem > shares[b].rem; });
  for (size_t k = 0; assigned < nodes_total && k < order.size(); ++k, ++assigned) {
    ++shares[order[k]].nodes;
  }
  std::string out = ",num\n";
  for (auto& s : shares) {
    s.nodes = std::max(s.nodes, s.min_nodes);
    out += fmt::format("{},{}\n", s.vc, s.nodes);
  }
  return out;
}

}  // namespace schedmate::trace
