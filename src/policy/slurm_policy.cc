#include "policy/slurm_policy.h"

#include <algorithm>
#include <cmath>

namespace schedmate::policy {
namespace {

// A breakpoint of the free-GPU timeline: from `time` until the next point, `free` GPUs are not
// taken by running jobs (until their limits) or by reservations.
struct Point {
  int64_t time;
  int64_t free;
};

// Ensures a breakpoint at `t` (copying the free count in force there); returns its position.
size_t Split(std::vector<Point>& line, int64_t t) {
  auto it = std::lower_bound(line.begin(), line.end(), t,
                             [](const Point& p, int64_t v) { return p.time < v; });
  if (it != line.end() && it->time == t) return static_cast<size_t>(it - line.begin());
  const int64_t free = it == line.begin() ? 0 : std::prev(it)->free;
  it = line.insert(it, Point{t, free});
  return static_cast<size_t>(it - line.begin());
}

// Earliest breakpoint time in [line[0].time, latest] at which `gpus` stay free for `length`;
// INT64_MAX if none.
int64_t EarliestFit(const std::vector<Point>& line, int64_t gpus, int64_t length, int64_t latest) {
  for (size_t i = 0; i < line.size() && line[i].time <= latest; ++i) {
    if (line[i].free < gpus) continue;
    const int64_t end = line[i].time > INT64_MAX - length ? INT64_MAX : line[i].time + length;
    size_t j = i + 1;
    while (j < line.size() && line[j].time < end && line[j].free >= gpus) ++j;
    if (j == line.size() || line[j].time >= end) return line[i].time;
    i = j;  // line[j] is too full: no start before it can fit
  }
  return INT64_MAX;
}

void Reserve(std::vector<Point>& line, int64_t from, int64_t length, int64_t gpus) {
  const int64_t end = from > INT64_MAX - length ? INT64_MAX : from + length;
  const size_t a = Split(line, from);
  const size_t b = end == INT64_MAX ? line.size() : Split(line, end);
  for (size_t i = a; i < b; ++i) line[i].free -= gpus;
}

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
  return h;
}

int64_t PlanLength(const JobRecord& job) {
  const Duration d =
      job.time_limit && *job.time_limit > Duration::Zero() ? *job.time_limit : kNoLimitPlan;
  return std::max<int64_t>(d.micros(), 1);
}

}  // namespace

SlurmPolicy::SlurmPolicy(const PolicyConfig& base, const SlurmConfig& config)
    : base_(base), config_(config) {
  for (const auto& [name, f] : config_.partition_factor) {
    max_partition_factor_ = std::max(max_partition_factor_, f);
  }
  for (const auto& [name, p] : config_.qos_priority) {
    max_qos_priority_ = std::max(max_qos_priority_, p);
  }
}

bool SlurmPolicy::Before(const Entry& a, const Entry& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.eligible_us != b.eligible_us) return a.eligible_us < b.eligible_us;
  return a.index < b.index;
}

void SlurmPolicy::DecayUsage(SimTime now) {
  if (now <= usage_time_) return;
  if (config_.decay_half_life > Duration::Zero()) {
    const double f = std::exp2(-static_cast<double>((now - usage_time_).micros()) /
                               static_cast<double>(config_.decay_half_life.micros()));
    total_usage_ = 0;
    for (double& u : usage_) {
      u *= f;
      total_usage_ += u;
    }
  }
  usage_time_ = now;
}

void SlurmPolicy::OnJobFinished(const JobRecord& job, SimTime finish) {
  DecayUsage(finish);
  const double used = std::ceil(job.gpus.as_double()) * job.duration.seconds_f();
  usage_[static_cast<size_t>(UserId(job))] += used;
  total_usage_ += used;
}

int32_t SlurmPolicy::UserId(const JobRecord& job) {
  // The user, else the account (exports without user names), as the fair-share entity.
  const std::string& name = job.user.empty() ? job.account : job.user;
  auto [it, added] = user_ids_.try_emplace(name, static_cast<int32_t>(usage_.size()));
  if (added) {
    usage_.push_back(0);
    running_usage_.push_back(0);
  }
  return it->second;
}

double SlurmPolicy::FairShare(int32_t user) const {
  const double total = total_usage_ + running_total_;
  if (total <= 0 || usage_.empty()) return 1.0;
  const auto u = static_cast<size_t>(user);
  const double mine = usage_[u] + running_usage_[u];
  const double users = static_cast<double>(usage_.size());
  return std::exp2(-(mine / total) * users);
}

double SlurmPolicy::Priority(const Entry& e, SimTime now, int64_t partition_gpus) const {
  const JobRecord& job = *e.record;
  const int32_t gpus = e.gpus;
  if (!config_.given_priority.empty()) {
    if (auto it = config_.given_priority.find(job.id); it != config_.given_priority.end()) {
      return static_cast<double>(it->second);
    }
  }
  if (!config_.multifactor) return 0;  // priority/basic: eligible order only
  double p = 0;
  if (config_.weight_age > 0) {
    const double age = std::clamp(static_cast<double>((now - job.submit).micros()) /
                                      static_cast<double>(config_.max_age.micros()),
                                  0.0, 1.0);
    p += static_cast<double>(config_.weight_age) * age;
  }
  if (config_.weight_fairshare > 0) {
    p += static_cast<double>(config_.weight_fairshare) * FairShare(e.user);
  }
  if (config_.weight_job_size > 0 && partition_gpus > 0) {
    double size =
        std::clamp(static_cast<double>(gpus) / static_cast<double>(partition_gpus), 0.0, 1.0);
    if (config_.favor_small) size = 1.0 - size;
    p += static_cast<double>(config_.weight_job_size) * size;
  }
  if (config_.weight_partition > 0) {
    int64_t f = 1;
    if (auto it = config_.partition_factor.find(job.vc); it != config_.partition_factor.end()) {
      f = it->second;
    }
    p += static_cast<double>(config_.weight_partition) * static_cast<double>(f) /
         static_cast<double>(std::max<int64_t>(max_partition_factor_, 1));
  }
  if (config_.weight_qos > 0 && max_qos_priority_ > 0) {
    if (auto it = config_.qos_priority.find(job.qos); it != config_.qos_priority.end()) {
      p += static_cast<double>(config_.weight_qos) * static_cast<double>(it->second) /
           static_cast<double>(max_qos_priority_);
    }
  }
  return std::floor(p);  // Slurm's priorities are integers
}

std::optional<Placement> SlurmPolicy::PlaceJob(const Entry& e, FreeMap& free) const {
  auto ex = config_.excluded_nodes.find(e.record->id);
  if (ex == config_.excluded_nodes.end()) return Place(base_.placement, e.gpus, free);
  FreeMap masked = free;
  for (int32_t node : ex->second) {
    if (node >= 0 && node < masked.nodes() && masked.Free(node) > 0) {
      masked.Take(node, masked.Free(node));
    }
  }
  auto placement = Place(base_.placement, e.gpus, masked);
  if (placement) {
    for (const auto& ns : placement->nodes) free.Take(ns.node, ns.gpus);
  }
  return placement;
}

void SlurmPolicy::Recalculate(const SchedulingInput& input) {
  DecayUsage(input.now);
  std::fill(running_usage_.begin(), running_usage_.end(), 0.0);
  running_total_ = 0;
  for (const auto& r : input.running) {
    const double attained = static_cast<double>(r.AttainedGpuSecondsAt(input.now));
    running_usage_[static_cast<size_t>(UserId(*r.record))] += attained;
    running_total_ += attained;
  }
  for (auto& e : queue_) e.priority = Priority(e, input.now, input.partition.total_gpus);
  std::sort(queue_.begin(), queue_.end(),
            [](const Entry& a, const Entry& b) { return Before(a, b); });
  const int64_t period = std::max<int64_t>(config_.calc_period.micros(), 1);
  next_calc_ = SimTime::FromMicros((input.now.micros() / period + 1) * period);
}

void SlurmPolicy::Insert(const JobView& view, const SchedulingInput& input) {
  const auto index = static_cast<size_t>(view.index);
  if (index >= queued_.size()) queued_.resize(std::max(index + 1, queued_.size() * 2), 0);
  if (queued_[index]) return;
  queued_[index] = 1;
  Entry e{0,           view.record->submit.micros(), view.index, view.record,
          view.gpus(), UserId(*view.record)};
  e.priority = Priority(e, input.now, input.partition.total_gpus);
  queue_.insert(std::upper_bound(queue_.begin(), queue_.end(), e, Before), e);
}

Decisions SlurmPolicy::Schedule(const SchedulingInput& input) {
  Decisions d;
  if (input.first_call || input.delta == nullptr) {
    queue_.clear();
    std::fill(queued_.begin(), queued_.end(), 0);
    for (const auto& v : input.pending) Insert(v, input);
  } else {
    for (JobIndex j : input.delta->entered_pending) {
      // New entries sit at the end of the pending list: search from the back.
      for (auto it = input.pending.rbegin(); it != input.pending.rend(); ++it) {
        if (it->index == j) {
          Insert(*it, input);
          break;
        }
      }
    }
  }
  if (input.now >= next_calc_) Recalculate(input);
  uint64_t signature_in = Mix(0, input.pending.size());
  for (const auto& r : input.running)
    signature_in = Mix(signature_in, static_cast<uint64_t>(r.index));

  FreeMap free = *input.partition.free;
  main_started_.clear();
  // Main scheduler: priority order, stop at the first job that does not fit.
  size_t started_main = 0;
  while (started_main < queue_.size()) {
    const Entry& e = queue_[started_main];
    auto placement = PlaceJob(e, free);
    if (!placement) break;
    d.start.push_back({e.index, std::move(*placement)});
    main_started_.emplace_back(PlanLength(*e.record), e.gpus);
    ++started_main;
  }
  for (size_t i = 0; i < started_main; ++i) queued_[static_cast<size_t>(queue_[i].index)] = 0;
  queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(started_main));

  if (config_.backfill && !queue_.empty()) {
    // A pass is due when the pending or running set changed since the last pass (Slurm skips
    // passes with nothing new) and bf_interval has passed.
    const bool changed = !backfill_ran_ || signature_in != signature_;
    const SimTime due = last_backfill_ + config_.bf_interval;
    if (changed && (!backfill_ran_ || input.now >= due)) {
      Backfill(input, free, d.start);
      backfill_ran_ = true;
      last_backfill_ = input.now;
      // What the next call will see if nothing else happens: these jobs running.
      uint64_t sig = Mix(0, input.pending.size() - d.start.size());
      for (const auto& r : input.running) sig = Mix(sig, static_cast<uint64_t>(r.index));
      for (const auto& st : d.start) sig = Mix(sig, static_cast<uint64_t>(st.job));
      signature_ = sig;
    } else if (changed) {
      d.wake_at = due;
    }
  }
  if (!queue_.empty() && config_.multifactor &&
      (config_.weight_age > 0 || config_.weight_fairshare > 0)) {
    if (!d.wake_at || next_calc_ < *d.wake_at) d.wake_at = next_calc_;
  }
  return d;
}

void SlurmPolicy::Backfill(const SchedulingInput& input, FreeMap& free,
                           std::vector<StartDecision>& starts) {
  ++backfill_passes_;
  const int64_t now = input.now.micros();
  // The timeline: everything free now, then each running job (and each job the main pass just
  // started) returns its GPUs at start + limit.
  std::vector<std::pair<int64_t, int64_t>> ends;  // (end by limit, gpus)
  ends.reserve(input.running.size() + main_started_.size());
  for (const auto& r : input.running) {
    const int64_t start = r.status->last_start.micros();
    const int64_t len = PlanLength(*r.record);
    int64_t end = start > INT64_MAX - len ? INT64_MAX : start + len;
    // Past its limit (an export's Elapsed can exceed Timelimit by KillWait): ends any moment.
    end = std::max(end, now + 1'000'000);
    ends.emplace_back(end, r.gpus());
  }
  for (const auto& [len, gpus] : main_started_) {
    ends.emplace_back(now > INT64_MAX - len ? INT64_MAX : now + len, gpus);
  }
  std::sort(ends.begin(), ends.end());
  std::vector<Point> line;
  line.reserve(ends.size() + 2 * static_cast<size_t>(config_.bf_max_job_test) + 1);
  int64_t level = free.total_free();
  line.push_back({now, level});
  for (const auto& [t, g] : ends) {
    if (t == INT64_MAX) continue;
    level += g;
    if (line.back().time == t) {
      line.back().free = level;
    } else {
      line.push_back({t, level});
    }
  }
  const int64_t window_end = now + config_.bf_window.micros();
  std::vector<std::pair<int64_t, int64_t>> no_slot;  // (GPUs, plan length) without a slot
  std::vector<size_t> started;                       // positions in queue_
  const size_t depth =
      std::min(queue_.size(), static_cast<size_t>(std::max<int64_t>(config_.bf_max_job_test, 0)));
  // Reservations only take GPUs away: once none is free now, no later job can start in this
  // pass, and its reservation would only matter to jobs after it. Stop testing (exact).
  for (size_t i = 0; i < depth && line.front().free > 0; ++i) {
    const Entry& e = queue_[i];
    const int64_t len = PlanLength(*e.record);
    // The timeline only loses GPUs during a pass: a job at least as wide and as long as one
    // that found no slot within the window finds none either (exact pruning).
    const bool dominated = std::any_of(no_slot.begin(), no_slot.end(), [&](const auto& f) {
      return f.first <= e.gpus && f.second <= len;
    });
    int64_t at = dominated ? INT64_MAX : EarliestFit(line, e.gpus, len, window_end);
    if (at == INT64_MAX && !dominated) no_slot.emplace_back(e.gpus, len);
    if (at == now) {
      if (auto placement = PlaceJob(e, free)) {
        starts.push_back({e.index, std::move(*placement)});
        Reserve(line, now, len, e.gpus);
        started.push_back(i);
        queued_[static_cast<size_t>(e.index)] = 0;
        ++backfill_starts_;
        continue;
      }
      // Free in total but fragmented across nodes: plan it from the next change on.
      std::vector<Point> later(line.begin() + 1, line.end());
      at = later.empty() ? INT64_MAX : EarliestFit(later, e.gpus, len, window_end);
    }
    if (at != INT64_MAX && at <= window_end) Reserve(line, at, len, e.gpus);
  }
  for (auto it = started.rbegin(); it != started.rend(); ++it) {
    queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(*it));
  }
}

}  // namespace schedmate::policy
