#include "sim/tune.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <exception>
#include <mutex>
#include <thread>

#include "core/check.h"
#include "core/file_util.h"
#include "core/strings.h"
#include "policy/policy_registry.h"
#include "sim/sim_json.h"
#include "sim/whatif_run.h"

namespace schedmate::sim {
namespace {

constexpr int kChunkFileVersion = 1;

// The fields a chunk file must share with the parent's problem.
nlohmann::json ProblemFingerprint(const TuneProblem& p, int32_t chunk, int32_t chunks) {
  return {{"version", kChunkFileVersion},
          {"grid", p.grid.Specs()},
          {"candidates", p.grid.candidates},
          {"objective", TuneObjectiveName(p.objective)},
          {"split_at_us", p.cut.micros()},
          {"train_jobs", p.train.jobs.size()},
          {"validation_jobs", p.validation.jobs.size()},
          {"cluster_gpus", p.cluster.total_gpus()},
          {"chunk", chunk},
          {"chunks", chunks}};
}

}  // namespace

std::string_view TuneObjectiveName(TuneObjective o) {
  switch (o) {
    case TuneObjective::kP95Queue:
      return "p95_queue_s";
    case TuneObjective::kAvgJct:
      return "avg_jct_s";
    case TuneObjective::kAvgQueue:
      break;
  }
  return "avg_queue_s";
}

std::optional<TuneObjective> ParseTuneObjective(std::string_view name) {
  for (auto o : {TuneObjective::kAvgQueue, TuneObjective::kP95Queue, TuneObjective::kAvgJct}) {
    if (TuneObjectiveName(o) == name) return o;
  }
  return std::nullopt;
}

double ObjectiveValue(const WhatIfMetrics& m, TuneObjective o) {
  switch (o) {
    case TuneObjective::kP95Queue:
      return m.p95_queue_s;
    case TuneObjective::kAvgJct:
      return m.avg_jct_s;
    case TuneObjective::kAvgQueue:
      break;
  }
  return m.avg_queue_s;
}

std::vector<std::pair<std::string, std::string>> TuneGrid::Settings(size_t i) const {
  std::vector<std::pair<std::string, std::string>> out(axes.size());
  size_t rest = i;
  for (size_t a = axes.size(); a-- > 0;) {
    out[a] = {axes[a].key, axes[a].values[rest % axes[a].values.size()]};
    rest /= axes[a].values.size();
  }
  return out;
}

policy::SlurmConfig TuneGrid::Apply(const policy::SlurmConfig& site, size_t i) const {
  policy::SlurmConfig config = site;
  for (const auto& [key, value] : Settings(i)) {
    Status st = policy::ApplySlurmSetting(config, key, value);
    SM_CHECK(st.ok()) << "grid value checked by ParseTuneGrid: " << st.ToString();
  }
  return config;
}

std::vector<std::string> TuneGrid::Specs() const {
  std::vector<std::string> out;
  for (const auto& a : axes) out.push_back(fmt::format("{}={}", a.key, fmt::join(a.values, ",")));
  return out;
}

const std::vector<std::string>& DefaultTuneGrid() {
  static const std::vector<std::string> kGrid = {
      "PriorityWeightAge=0,1000,10000", "PriorityWeightFairshare=0,1000,10000",
      "PriorityWeightJobSize=0,1000", "bf_window=1440,2880"};
  return kGrid;
}

Result<TuneGrid> ParseTuneGrid(const std::vector<std::string>& specs) {
  TuneGrid grid;
  for (const auto& g : specs.empty() ? DefaultTuneGrid() : specs) {
    const size_t eq = g.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::InvalidArgument(fmt::format("--grid {}: expected KEY=v1,v2,...", g));
    }
    TuneAxis axis{std::string(Trim(std::string_view(g).substr(0, eq))), {}};
    for (auto v : Split(std::string_view(g).substr(eq + 1), ',')) {
      std::string value(Trim(v));
      if (value.empty()) continue;
      policy::SlurmConfig probe;
      if (Status st = policy::ApplySlurmSetting(probe, axis.key, value); !st.ok()) {
        return Status::InvalidArgument(fmt::format("--grid {}: {}", g, st.message()));
      }
      axis.values.push_back(std::move(value));
    }
    if (axis.values.empty()) return Status::InvalidArgument(fmt::format("--grid {}: no values", g));
    grid.candidates *= axis.values.size();
    if (grid.candidates > kMaxTuneCandidates) {
      return Status::InvalidArgument(
          fmt::format("--grid: more than {} candidates", kMaxTuneCandidates));
    }
    grid.axes.push_back(std::move(axis));
  }
  return grid;
}

Status SplitForTuning(const JobTable& history, double train_fraction, std::string_view source,
                      TuneProblem& problem) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const auto& j : history.jobs) {
    lo = std::min(lo, j.submit.micros());
    hi = std::max(hi, j.submit.micros());
  }
  if (history.jobs.empty()) lo = hi = 0;
  problem.cut =
      SimTime::FromMicros(lo + static_cast<int64_t>(static_cast<double>(hi - lo) * train_fraction));
  problem.train = JobTable{};
  problem.validation = JobTable{};
  problem.train.format = problem.validation.format = history.format;
  for (const auto& j : history.jobs) {
    (j.submit < problem.cut ? problem.train : problem.validation).jobs.push_back(j);
  }
  if (problem.train.jobs.size() < 2 || problem.validation.jobs.size() < 2) {
    return Status::InvalidArgument(fmt::format(
        "{}: splitting at {:.0f} s leaves {} training and {} validation jobs; need 2 each", source,
        problem.cut.seconds_f(), problem.train.jobs.size(), problem.validation.jobs.size()));
  }
  return Status::Ok();
}

Result<WhatIfMetrics> SimulateSlurmPolicy(const JobTable& jobs, const ClusterSpec& cluster,
                                          const policy::SlurmConfig& config,
                                          std::string_view label) {
  SM_ASSIGN_OR_RETURN(WhatIfRunResult run,
                      ReplayOnce(jobs, cluster, "slurm", config, 1, std::string(label), {}));
  return std::move(run.metrics);
}

Result<std::vector<CandidateScore>> ScoreCandidates(const TuneProblem& problem, size_t begin,
                                                    size_t end, int32_t threads) {
  SM_CHECK(begin <= end && end <= problem.grid.candidates) << "candidate range";
  std::vector<CandidateScore> scores(end - begin);
  std::vector<Status> errors(end - begin);
  std::atomic<size_t> next{begin};
  auto work = [&]() {
    for (size_t i = next++; i < end; i = next++) {
      auto m =
          SimulateSlurmPolicy(problem.train, problem.cluster, problem.grid.Apply(problem.site, i),
                              fmt::format("candidate {}", i));
      if (!m.ok()) {
        errors[i - begin] = m.status();
        continue;
      }
      scores[i - begin] = CandidateScore{i, ObjectiveValue(*m, problem.objective)};
    }
  };
  const size_t n = std::clamp<size_t>(static_cast<size_t>(std::max(threads, 1)), 1,
                                      std::max<size_t>(end - begin, 1));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (const auto& e : errors) {
    if (!e.ok()) return e;  // the lowest failing index: deterministic
  }
  return scores;
}

CandidateRange TuneChunk(size_t candidates, int32_t chunk, int32_t chunks) {
  SM_CHECK(chunks > 0 && chunk >= 0 && chunk < chunks) << "chunk " << chunk << "/" << chunks;
  const auto k = static_cast<size_t>(chunk), n = static_cast<size_t>(chunks);
  return {k * candidates / n, (k + 1) * candidates / n};
}

nlohmann::json TuneChunkToJson(const TuneProblem& problem, int32_t chunk, int32_t chunks,
                               const std::vector<CandidateScore>& scores) {
  nlohmann::json out = ProblemFingerprint(problem, chunk, chunks);
  nlohmann::json list = nlohmann::json::array();
  for (const auto& s : scores) list.push_back({{"index", s.index}, {"objective", s.objective}});
  out["scores"] = std::move(list);
  return out;
}

Result<std::vector<CandidateScore>> ReadTuneChunk(const std::string& path,
                                                  const TuneProblem& problem, int32_t chunk,
                                                  int32_t chunks) {
  auto text = ReadTextFileToString(path);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) return text.status();
    return Status::DataLoss(fmt::format("{}: {}", path, text.status().message()));
  }
  const nlohmann::json doc = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("scores") || !doc["scores"].is_array()) {
    return Status::DataLoss(fmt::format("{}: not a tune chunk result", path));
  }
  const nlohmann::json want = ProblemFingerprint(problem, chunk, chunks);
  for (auto it = want.begin(); it != want.end(); ++it) {
    if (!doc.contains(it.key()) || doc[it.key()] != it.value()) {
      return Status::DataLoss(fmt::format(
          "{}: {} is {}, expected {} (another tune run?)", path, it.key(),
          doc.contains(it.key()) ? doc[it.key()].dump() : "missing", it.value().dump()));
    }
  }
  const CandidateRange range = TuneChunk(problem.grid.candidates, chunk, chunks);
  std::vector<CandidateScore> scores;
  for (const auto& s : doc["scores"]) {
    const size_t want_index = range.begin + scores.size();
    if (!s.is_object() || !s.contains("index") || !s["index"].is_number_unsigned() ||
        !s.contains("objective") || !s["objective"].is_number() ||
        s["index"].get<size_t>() != want_index) {
      return Status::DataLoss(
          fmt::format("{}: score {} is not candidate {}", path, scores.size(), want_index));
    }
    scores.push_back(CandidateScore{want_index, s["objective"].get<double>()});
  }
  if (scores.size() != range.end - range.begin) {
    return Status::DataLoss(fmt::format("{}: {} scores for candidates {}..{}", path, scores.size(),
                                        range.begin, range.end - 1));
  }
  return scores;
}

Result<nlohmann::json> FinishTune(const TuneProblem& problem,
                                  const std::vector<CandidateScore>& scores,
                                  const std::vector<std::string>& notes) {
  SM_CHECK(scores.size() == problem.grid.candidates) << "every candidate scored";
  auto train_base =
      SimulateSlurmPolicy(problem.train, problem.cluster, problem.site, "train baseline");
  if (!train_base.ok()) return train_base.status();
  const double train_baseline = ObjectiveValue(*train_base, problem.objective);
  double best = train_baseline;
  std::optional<size_t> best_index;
  for (const auto& s : scores) {
    if (s.objective < best) {  // strictly better: ties keep the site's setting or the earlier one
      best = s.objective;
      best_index = s.index;
    }
  }
  const policy::SlurmConfig best_config =
      best_index ? problem.grid.Apply(problem.site, *best_index) : problem.site;
  nlohmann::json best_values = nlohmann::json::object();
  if (best_index) {
    for (const auto& [key, value] : problem.grid.Settings(*best_index)) best_values[key] = value;
  }
  auto val_base =
      SimulateSlurmPolicy(problem.validation, problem.cluster, problem.site, "validation");
  if (!val_base.ok()) return val_base.status();
  auto val_best =
      SimulateSlurmPolicy(problem.validation, problem.cluster, best_config, "validation");
  if (!val_best.ok()) return val_best.status();
  const double vb = ObjectiveValue(*val_base, problem.objective);
  const double vp = ObjectiveValue(*val_best, problem.objective);
  const double improvement = vb > 0 ? 100.0 * (vb - vp) / vb : 0.0;
  return nlohmann::json{{"recommended", best_values},
                        {"baseline", WhatIfMetricsToJson(*val_base)},
                        {"predicted", WhatIfMetricsToJson(*val_best)},
                        {"validation",
                         {{"objective", TuneObjectiveName(problem.objective)},
                          {"split_at_s", problem.cut.seconds_f()},
                          {"train_jobs", problem.train.jobs.size()},
                          {"validation_jobs", problem.validation.jobs.size()},
                          {"candidates", problem.grid.candidates},
                          {"train_baseline", train_baseline},
                          {"train_best", best},
                          {"validation_baseline", vb},
                          {"validation_predicted", vp},
                          {"improvement_pct", improvement},
                          {"holds", vp <= vb}}},
                        {"slurm_conf_lines", policy::SlurmConfLines(best_config)},
                        {"notes", notes}};
}

}  // namespace schedmate::sim
