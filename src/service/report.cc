#include "service/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/strings.h"
#include "sim/metrics.h"

namespace schedmate::service {
namespace {

// Milli-GPU x microseconds: a job's product fits int64, sums of many may not.
__extension__ using Int128 = __int128;

constexpr int64_t kUsPerDay = 86'400'000'000LL;
// Bounds of a report time: 1970-01-01 .. 9999-12-31, and durations up to 100 years back.
constexpr int64_t kMaxBackSeconds = 100LL * 366 * 86'400;

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int64_t DaysInMonth(int64_t y, int64_t m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

// Digits only, 1..n characters: the value; else nullopt.
std::optional<int64_t> Digits(std::string_view s, size_t n) {
  if (s.size() != n) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

// "YYYY-MM-DD[THH:MM[:SS]][Z]" as UTC, or nullopt.
std::optional<SimTime> ParseUtcDate(std::string_view s) {
  if (!s.empty() && (s.back() == 'Z' || s.back() == 'z')) s.remove_suffix(1);
  if (s.size() < 10 || s[4] != '-' || s[7] != '-') return std::nullopt;
  auto y = Digits(s.substr(0, 4), 4), mo = Digits(s.substr(5, 2), 2), d = Digits(s.substr(8, 2), 2);
  if (!y || !mo || !d || *y < 1970 || *mo < 1 || *mo > 12 || *d < 1 || *d > DaysInMonth(*y, *mo))
    return std::nullopt;
  int64_t hh = 0, mm = 0, ss = 0;
  std::string_view rest = s.substr(10);
  if (!rest.empty()) {
    if ((rest[0] != 'T' && rest[0] != 't' && rest[0] != ' ') ||
        (rest.size() != 6 && rest.size() != 9))
      return std::nullopt;
    auto h = Digits(rest.substr(1, 2), 2), m = Digits(rest.substr(4, 2), 2);
    if (rest[3] != ':' || !h || !m || *h > 23 || *m > 59) return std::nullopt;
    hh = *h;
    mm = *m;
    if (rest.size() == 9) {
      auto sec = Digits(rest.substr(7, 2), 2);
      if (rest[6] != ':' || !sec || *sec > 59) return std::nullopt;
      ss = *sec;
    }
  }
  return SimTime::FromSeconds(DaysFromCivil(*y, *mo, *d) * 86'400 + hh * 3600 + mm * 60 + ss);
}

// "<digits><unit>" back from now, or nullopt.
std::optional<SimTime> ParseAgo(std::string_view s, SimTime now) {
  if (s.size() < 2 || s.size() > 12) return std::nullopt;
  int64_t unit = 0;
  switch (s.back()) {
    case 's':
      unit = 1;
      break;
    case 'm':
      unit = 60;
      break;
    case 'h':
      unit = 3600;
      break;
    case 'd':
      unit = 86'400;
      break;
    case 'w':
      unit = 7 * 86'400;
      break;
    default:
      return std::nullopt;
  }
  auto n = Digits(s.substr(0, s.size() - 1), s.size() - 1);
  if (!n || *n > kMaxBackSeconds / unit) return std::nullopt;
  return now - Duration::Seconds(*n * unit);
}

double GpuHours(Int128 milli_us) { return static_cast<double>(milli_us) / 3.6e12; }

// The part of [a, b] inside [lo, hi), in microseconds (0 when none).
int64_t OverlapUs(SimTime a, SimTime b, SimTime lo, SimTime hi) {
  const int64_t s = std::max(a.micros(), lo.micros()), e = std::min(b.micros(), hi.micros());
  return std::max<int64_t>(0, e - s);
}

bool InPeriod(SimTime t, SimTime lo, SimTime hi) { return t >= lo && t < hi; }

std::string RowName(const std::string& s) { return s.empty() ? "(none)" : s; }

struct Acc {  // one GPU-hours row while it is summed
  int64_t jobs = 0;
  Int128 allocated = 0, tracked = 0;
  double used_hours = 0;
  bool any_tracked = false;
  void Add(Int128 milli_us, std::optional<double> util) {
    ++jobs;
    allocated += milli_us;
    if (util) {
      any_tracked = true;
      tracked += milli_us;
      used_hours += GpuHours(milli_us) * *util;
    }
  }
  GpuHoursRow Row(std::string name) const {
    GpuHoursRow r{std::move(name), jobs, GpuHours(allocated), std::nullopt, GpuHours(tracked)};
    if (any_tracked) r.used_gpu_hours = used_hours;
    return r;
  }
};

struct WasteAcc {
  Int128 milli_us = 0;
  double hours = 0;  // for the utilisation-weighted category
  std::set<std::string> jobs;
};

// One ended run's contribution to the GPU-hour rows, waste, queueing, days and accuracy.
class RunCounter {
 public:
  RunCounter(const ReportInput& in, Report& r) : in_(in), r_(r) {}

  void Add(const store::StoredJob& sj) {
    const JobRecord& j = sj.job;
    const SimTime end = *sj.finish, start = end - j.duration;
    if (end < in_.since || start >= in_.until) return;
    ++r_.runs_in_period;
    const Int128 alloc =
        static_cast<Int128>(j.gpus.milli()) * OverlapUs(start, end, in_.since, in_.until);
    std::optional<double> util;
    if (auto it = in_.gpu_utilisation.find(j.id); it != in_.gpu_utilisation.end())
      util = std::clamp(it->second, 0.0, 1.0);
    users_[j.user].Add(alloc, util);
    partitions_[j.vc].Add(alloc, util);
    total_.Add(alloc, util);
    if (util) AddWaste("idle_gpus", j.id, 0, GpuHours(alloc) * (1 - *util));
    if (j.state == JobState::kFailed || j.state == JobState::kNodeFail ||
        j.state == JobState::kOutOfMemory)
      AddWaste("failed_runs", j.id, alloc, 0);
    if (j.state == JobState::kTimeout) AddWaste("time_limit_kills", j.id, alloc, 0);
    if (InPeriod(start, in_.since, in_.until))
      waits_[j.vc].push_back(std::max(0.0, (start - j.submit).seconds_f()));
    AddDays(j.vc, j.gpus.milli(), start, end);
    if (InPeriod(end, in_.since, in_.until)) Score(sj, start);
  }

  void AddStalls(const store::StoredJob& sj, const std::vector<MetricSample>& s) {
    for (size_t i = 0; i < s.size(); ++i) {
      if (!s[i].stalled) continue;
      std::optional<SimTime> next;
      if (i + 1 < s.size())
        next = s[i + 1].at;
      else if (sj.finish)
        next = *sj.finish;
      if (!next || *next <= s[i].at) continue;
      const int64_t us = OverlapUs(s[i].at, *next, in_.since, in_.until);
      if (us > 0) AddWaste("stalled", sj.job.id, static_cast<Int128>(sj.job.gpus.milli()) * us, 0);
    }
  }

  void Finish();

 private:
  void AddWaste(const std::string& category, const std::string& job, Int128 milli_us,
                double hours) {
    WasteAcc& w = waste_[category];
    w.milli_us += milli_us;
    w.hours += hours;
    w.jobs.insert(job);
  }

  void AddDays(const std::string& vc, int64_t milli, SimTime start, SimTime end) {
    const SimTime lo = std::max(start, in_.since), hi = std::min(end, in_.until);
    for (int64_t day = Floor(lo.micros()); day < hi.micros(); day += kUsPerDay) {
      const int64_t us =
          OverlapUs(lo, hi, SimTime::FromMicros(day), SimTime::FromMicros(day + kUsPerDay));
      r_.daily_gpu_hours[RowName(vc)][day / 1'000'000] += GpuHours(static_cast<Int128>(milli) * us);
    }
  }
  static int64_t Floor(int64_t us) {
    int64_t d = us / kUsPerDay;
    if (us % kUsPerDay < 0) --d;
    return d * kUsPerDay;
  }

  void Score(const store::StoredJob& sj, SimTime start) {
    AccuracySummary& a = r_.accuracy;
    if (sj.job.state != JobState::kCompleted || sj.job.duration <= Duration::Zero()) {
      ++a.not_completed;
      return;
    }
    auto it = in_.predictions.find(sj.job.id);
    if (it == in_.predictions.end() || it->second.empty()) {
      ++a.ended_without_prediction;
      return;
    }
    const store::StoredPrediction* p = &it->second.front();  // the earliest, else
    for (const auto& q : it->second)
      if (q.made_at <= start && q.made_at >= p->made_at) p = &q;  // the latest before the start
    if (p->duration <= Duration::Zero()) {
      ++a.ended_without_prediction;
      return;
    }
    ++a.jobs;
    const double ratio = sj.job.duration.seconds_f() / p->duration.seconds_f();
    a.ratios.push_back(ratio);
    abs_log2_.push_back(std::abs(std::log2(ratio)));
    within_ += ratio >= 0.5 && ratio <= 2.0 ? 1 : 0;
    covered_ += p->low <= sj.job.duration && sj.job.duration <= p->high ? 1 : 0;
  }

  const ReportInput& in_;
  Report& r_;
  std::map<std::string, Acc> users_, partitions_;
  Acc total_;
  std::map<std::string, WasteAcc> waste_;
  std::map<std::string, std::vector<double>> waits_;
  std::vector<double> abs_log2_;
  int64_t within_ = 0, covered_ = 0;
};

QueueRow QueueStats(std::string name, std::vector<double>& w) {
  std::sort(w.begin(), w.end());
  QueueRow q;
  q.partition = std::move(name);
  q.jobs = static_cast<int64_t>(w.size());
  if (w.empty()) return q;
  double sum = 0;
  for (double x : w) sum += x;
  q.avg_wait_s = sum / static_cast<double>(w.size());
  q.p50_wait_s = sim::Quantile(w, 0.5);
  q.p95_wait_s = sim::Quantile(w, 0.95);
  q.max_wait_s = w.back();
  return q;
}

void RunCounter::Finish() {
  for (const auto& [name, acc] : users_) r_.by_user.push_back(acc.Row(RowName(name)));
  for (const auto& [name, acc] : partitions_) r_.by_partition.push_back(acc.Row(RowName(name)));
  const GpuHoursRow total = total_.Row("");
  r_.allocated_gpu_hours = total.allocated_gpu_hours;
  r_.used_gpu_hours = total.used_gpu_hours;
  r_.tracked_gpu_hours = total.tracked_gpu_hours;

  struct Category {
    const char* name;
    const char* basis;
  };
  static constexpr Category kCategories[] = {
      {"idle_gpus", "allocated x (1 - tracked GPU utilisation), tracked jobs only"},
      {"over_requested", "unknown: the store records no per-GPU use (ranks, processes)"},
      {"failed_runs", "ended FAILED, NODE_FAIL or OUT_OF_MEMORY: their allocated GPU-hours"},
      {"time_limit_kills", "ended TIMEOUT: their allocated GPU-hours"},
      {"stalled", "GPUs x time from a tracker sample marked stalled to the next sample"},
  };
  for (const Category& c : kCategories) {
    WasteRow w{c.name, std::nullopt, 0, c.basis};
    auto it = waste_.find(c.name);
    const bool unknown =
        w.category == "over_requested" || (w.category == "idle_gpus" && !total.used_gpu_hours);
    if (it != waste_.end()) {
      w.gpu_hours = GpuHours(it->second.milli_us) + it->second.hours;
      w.jobs = static_cast<int64_t>(it->second.jobs.size());
    } else if (!unknown) {
      w.gpu_hours = 0;
    }
    if (w.category == "idle_gpus" && !w.gpu_hours)
      w.basis = "unknown: no job's GPU use was tracked";
    r_.waste.push_back(std::move(w));
  }

  std::vector<double> all;
  for (auto& [vc, w] : waits_) {
    all.insert(all.end(), w.begin(), w.end());
    r_.queueing.push_back(QueueStats(RowName(vc), w));
    r_.waits_s[RowName(vc)] = w;  // sorted by QueueStats
  }
  r_.queueing.push_back(QueueStats("(all)", all));

  AccuracySummary& a = r_.accuracy;
  std::sort(a.ratios.begin(), a.ratios.end());
  if (a.jobs > 0) {
    std::sort(abs_log2_.begin(), abs_log2_.end());
    a.within_2x = static_cast<double>(within_) / static_cast<double>(a.jobs);
    a.median_abs_log2 = sim::Quantile(abs_log2_, 0.5);
    a.p10_p90_coverage = static_cast<double>(covered_) / static_cast<double>(a.jobs);
  }
}

void CountFailures(const ReportInput& in,
                   const std::map<std::string, const store::StoredJob*>& jobs, Report& r) {
  std::map<std::pair<std::string, std::string>, FailureRow> rows;
  for (const FailureRecord& f : in.failures) {
    if (!InPeriod(f.at, in.since, in.until)) continue;
    const std::string cls(FailureClassName(f.cls));
    FailureRow& row = rows[{cls, f.category}];
    row.cls = cls;
    row.category = f.category;
    ++row.failures;
    if (auto it = jobs.find(f.job_id); it != jobs.end()) {
      const JobRecord& j = it->second->job;
      row.gpu_hours += GpuHours(static_cast<Int128>(j.gpus.milli()) * j.duration.micros());
    }
    (f.cls == FailureClass::kInfra ? r.failures_infra
     : f.cls == FailureClass::kApp ? r.failures_app
                                   : r.failures_unknown)++;
  }
  for (auto& [key, row] : rows) r.failures.push_back(std::move(row));
}

void CountActions(const ReportInput& in, Report& r) {
  std::map<std::pair<std::string, std::string>, ActionRow> rows;
  for (const ActionRecord& a : in.actions) {
    if (!InPeriod(a.at, in.since, in.until)) continue;
    const std::string kind(ActionKindName(a.kind)), outcome(ActionOutcomeName(a.outcome));
    ActionRow& row = rows[{kind, outcome}];
    row.kind = kind;
    row.outcome = outcome;
    ++row.count;
    row.dry_run += a.dry_run ? 1 : 0;
  }
  for (auto& [key, row] : rows) r.actions.push_back(std::move(row));
}

}  // namespace

Result<SimTime> ParseReportTime(std::string_view text, SimTime now, std::string_view flag) {
  const std::string_view t = Trim(text);
  if (t == "now") return now;
  if (auto ago = ParseAgo(t, now)) return *ago;
  if (auto at = ParseUtcDate(t)) return *at;
  return Status::InvalidArgument(fmt::format(
      "{}: '{}' is neither a duration back from now (45s, 90m, 36h, 7d, 2w) nor a UTC date "
      "(2026-11-01, 2026-11-01T06:30[:15][Z]) nor 'now'",
      flag, text));
}

Result<ReportInput> LoadReportInput(store::HistoryStore& history, ServiceStore& service,
                                    SimTime since, SimTime until) {
  if (until <= since) {
    return Status::InvalidArgument(
        fmt::format("the period is empty: --until ({} s) is not after --since ({} s)",
                    until.seconds(), since.seconds()));
  }
  ReportInput in;
  in.since = since;
  in.until = until;
  store::ListJobsOptions all;
  all.finished_only = false;
  SM_ASSIGN_OR_RETURN(std::vector<store::StoredJob> jobs, history.ListJobs(all));
  constexpr int64_t kSampleCap = 1'000'000;  // per job; a week at 1 sample/s fits
  // Another cluster than the default one (slurm.clusters): its jobs only, stored in the shared
  // history as "<cluster>/<id>" (Companion::HistoryId) and reported by their Slurm id.
  const std::string prefix = service.cluster() == kDefaultCluster ? "" : service.cluster() + "/";
  for (auto& sj : jobs) {
    if (sj.job.submit >= until) continue;
    if (sj.finish && *sj.finish < since) continue;
    const std::string key = sj.job.id;
    if (!prefix.empty()) {
      if (!StartsWith(key, prefix)) continue;
      sj.job.id = key.substr(prefix.size());
    }
    if (sj.finish) {
      SM_ASSIGN_OR_RETURN(auto preds, history.ListPredictions(key));
      if (!preds.empty()) in.predictions[sj.job.id] = std::move(preds);
    }
    SM_ASSIGN_OR_RETURN(auto samples, service.MetricSeries(sj.job.id, kSampleCap));
    if (!samples.empty()) in.samples[sj.job.id] = std::move(samples);
    SM_ASSIGN_OR_RETURN(std::optional<double> util,
                        service.MeanGpuUtilisation(sj.job.id, since, until));
    if (util) in.gpu_utilisation[sj.job.id] = *util;
    in.jobs.push_back(std::move(sj));
  }
  constexpr int64_t kRecordCap = 10'000'000;
  SM_ASSIGN_OR_RETURN(auto failures, service.RecentFailures(kRecordCap));
  for (auto& f : failures)
    if (InPeriod(f.at, since, until)) in.failures.push_back(std::move(f));
  SM_ASSIGN_OR_RETURN(auto actions, service.RecentActions(kRecordCap));
  for (auto& a : actions)
    if (InPeriod(a.at, since, until)) in.actions.push_back(std::move(a));
  if (in.gpu_utilisation.empty()) {
    in.notes.push_back(
        "GPU utilisation: no job in the period was probed (usage.gpu_source), so used GPU-hours "
        "are unknown");
  }
  return in;
}

Report BuildReport(const ReportInput& in) {
  Report r;
  r.since = in.since;
  r.until = in.until;
  r.notes = in.notes;
  std::vector<const store::StoredJob*> jobs;
  for (const auto& sj : in.jobs) jobs.push_back(&sj);
  std::sort(jobs.begin(), jobs.end(),
            [](const auto* a, const auto* b) { return a->job.id < b->job.id; });
  std::map<std::string, const store::StoredJob*> by_id;
  RunCounter counter(in, r);
  for (const store::StoredJob* sj : jobs) {
    by_id[sj->job.id] = sj;
    if (sj->finish) {
      counter.Add(*sj);
    } else if (sj->job.submit < in.until) {
      ++r.unfinished_jobs;
    }
    if (auto it = in.samples.find(sj->job.id); it != in.samples.end())
      counter.AddStalls(*sj, it->second);
  }
  counter.Finish();
  CountFailures(in, by_id, r);
  CountActions(in, r);
  if (r.unfinished_jobs > 0) {
    r.notes.push_back(fmt::format(
        "{} job(s) had not ended by the end of the period (or their end was not recorded); "
        "they are not in the GPU-hours",
        r.unfinished_jobs));
  }
  return r;
}

}  // namespace schedmate::service
