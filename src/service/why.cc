#include "service/why.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/strings.h"

namespace schedmate::service {
namespace {

// GPUs free now on the available nodes of one partition (all nodes when a node lists none).
struct PartitionRoom {
  std::map<std::string, int32_t> free;  // node -> free GPUs
  std::set<std::string> nodes;
};

bool InPartition(const slurm::SlurmNode& n, const std::string& partition) {
  return n.partitions.empty() ||
         std::find(n.partitions.begin(), n.partitions.end(), partition) != n.partitions.end();
}

PartitionRoom RoomOf(const ServiceView& view, const std::string& partition) {
  PartitionRoom r;
  for (const auto& n : view.nodes) {
    if (!InPartition(n, partition)) continue;
    r.nodes.insert(n.name);
    r.free[n.name] = n.available() ? std::max(0, n.gpus_total - n.gpus_used) : 0;
  }
  return r;
}

bool Fits(const std::map<std::string, int32_t>& free, int32_t nodes, int32_t gpus_per_node) {
  int32_t ok = 0;
  for (const auto& [name, f] : free)
    if (f >= gpus_per_node) ++ok;
  return ok >= std::max(1, nodes);
}

int32_t MostFreeOnOneNode(const PartitionRoom& r) {
  int32_t best = 0;
  for (const auto& [name, f] : r.free) best = std::max(best, f);
  return best;
}

// When a running job is expected to end, and what says so.
struct ExpectedEnd {
  std::optional<SimTime> at;
  std::string source;
};

ExpectedEnd EndOf(const JobView& j, SimTime now) {
  ExpectedEnd e;
  if (j.metrics && j.metrics->eta) {
    e = {j.metrics->at + *j.metrics->eta, "tracker"};
  } else if (j.prediction && j.job.start) {
    e = {*j.job.start + j.prediction->duration, "advisor"};
  } else if (j.job.time_limit_min && j.job.start) {
    e = {*j.job.start + Duration::Minutes(*j.job.time_limit_min), "time_limit"};
  }
  if (e.at && j.job.time_limit_min && j.job.start) {
    e.at = std::min(*e.at, *j.job.start + Duration::Minutes(*j.job.time_limit_min));
  }
  if (e.at && *e.at < now) e.at = now;
  return e;
}

bool Ahead(const slurm::SlurmJob& a, const slurm::SlurmJob& b) {  // a scheduled before b
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.submit != b.submit) return a.submit < b.submit;
  return a.id < b.id;
}

bool IsHeldJob(const slurm::SlurmJob& j) {
  return j.priority == 0 || j.reason.rfind("JobHeld", 0) == 0 ||
         j.reason == "job_requeued_in_held_state";
}

// The sacctmgr QOS column holding the limit a reason code names ("QOSMaxGRESPerUser" ->
// "MaxTRESPU"), "" when the family has no QOS column.
std::string QosColumn(const ReasonInfo& r) {
  if (r.resource == "Wall" || r.resource == "WallDuration")
    return r.limit == "Grp" ? "GrpWall" : "MaxWall";
  if (r.resource == "Jobs")
    return r.limit == "Grp" ? "GrpJobs" : r.per == "PerAccount" ? "MaxJobsPA" : "MaxJobsPU";
  if (r.resource == "SubmitJob" || r.resource == "SubmitJobs")
    return r.limit == "Grp" ? "GrpSubmit" : r.per == "PerAccount" ? "MaxSubmitPA" : "MaxSubmitPU";
  std::string column = r.limit + "TRES";
  if (r.minutes)
    column += r.limit == "Grp" && r.code.find("RunMin") != std::string::npos ? "RunMins" : "Mins";
  if (r.per == "PerUser") return column + "PU";
  if (r.per == "PerAccount") return column + "PA";
  if (r.per == "PerNode") return column + "PerNode";
  return column;
}

// The sacctmgr association column holding the limit an Assoc reason code names
// ("AssocGrpGRESRunMinutes" -> "GrpTRESRunMins"), "" when associations have none (Min limits).
std::string AssocColumn(const ReasonInfo& r) {
  const bool grp = r.limit == "Grp";
  if (r.limit != "Grp" && r.limit != "Max") return "";
  if (r.resource == "Wall" || r.resource == "WallDuration") return grp ? "GrpWall" : "MaxWall";
  if (r.resource == "Jobs" || r.resource == "Job") return grp ? "GrpJobs" : "MaxJobs";
  if (r.resource == "SubmitJob" || r.resource == "SubmitJobs")
    return grp ? "GrpSubmit" : "MaxSubmit";
  if (grp) {
    if (!r.minutes) return "GrpTRES";
    return r.code.find("RunMin") != std::string::npos ? "GrpTRESRunMins" : "GrpTRESMins";
  }
  if (r.per == "PerNode") return "MaxTRESPerNode";
  return r.minutes ? "MaxTRESMins" : "MaxTRES";
}

// "Assoc schedmate/root" (a user's association, "/partition" when it names one) or
// "Assoc schedmate" (an account's).
std::string AssocName(const slurm::AssocLimits& a) {
  if (a.user.empty()) return "Assoc " + a.account;
  return fmt::format("Assoc {}/{}{}", a.account, a.user,
                     a.partition.empty() ? "" : "/" + a.partition);
}

// The TRES name of a reason's resource ("GRES" -> "gres/gpu"), "" when it has none.
std::string TresOf(const ReasonInfo& r) {
  if (r.resource == "GRES") return "gres/gpu";
  if (r.resource == "Cpu") return "cpu";
  if (r.resource == "Node") return "node";
  if (r.resource == "Mem" || r.resource == "Memory") return "mem";
  if (r.resource == "Billing") return "billing";
  return "";
}

const slurm::QosLimits* FindQos(const ServiceView& view, const std::string& name) {
  for (const auto& q : view.qos)
    if (q.name == name) return &q;
  return nullptr;
}

std::string Clock(SimTime t, SimTime now) {
  const Duration d = t - now;
  if (d <= Duration::Zero()) return "now";
  return "in " + FormatDuration(d);
}

class Explainer {
 public:
  Explainer(const ServiceView& view, const JobView& job, SimTime now,
            const ReasonCatalogue& reasons, const WhyOptions& options)
      : view_(view),
        job_(job),
        j_(job.job),
        now_(now),
        options_(options),
        reasons_(reasons),
        reason_(reasons.Lookup(j_.reason)) {}

  WhyAnswer Run() {
    a_.job_id = j_.id;
    a_.state = j_.state;
    if (j_.state != "PENDING") return NotPending();
    a_.reason_code = reason_.code;
    a_.reason_kind = std::string(ReasonKindName(reason_.kind));
    a_.reason_known = reason_.known;
    if (job_.start_estimate && job_.start_estimate->start) {
      a_.expected_start = job_.start_estimate->start;
    }
    std::string specifics = Specifics();
    a_.explanation = reason_.words + (specifics.empty() ? "" : " " + specifics);
    return std::move(a_);
  }

 private:
  WhyAnswer NotPending() {
    a_.reason_kind = "none";
    a_.reason_known = true;
    if (j_.state == "RUNNING") {
      a_.explanation =
          fmt::format("The job is running{}{}.", j_.node_list.empty() ? "" : " on " + j_.node_list,
                      j_.start ? ", started " + FormatDuration(now_ - *j_.start) + " ago" : "");
      a_.expected_start = j_.start;
    } else {
      a_.explanation = "The job is not pending (state " + j_.state + ").";
    }
    return std::move(a_);
  }

  // Evidence and suggestions for the kind of wait; returns the sentence with the specifics.
  std::string Specifics() {
    switch (reason_.kind) {
      case ReasonKind::kResources:
      case ReasonKind::kPriority:
        return QueueSpecifics();
      case ReasonKind::kDependency:
        return DependencySpecifics();
      case ReasonKind::kBeginTime:
        return BeginTimeSpecifics();
      case ReasonKind::kHeld:
        return HeldSpecifics();
      case ReasonKind::kLimitGroup:
      case ReasonKind::kLimitJob:
      case ReasonKind::kPartition:
        return LimitSpecifics();
      default:
        return "";
    }
  }

  std::string QueueSpecifics() {
    const PartitionRoom room = RoomOf(view_, j_.partition);
    const int32_t gpn = j_.gpus_per_node;
    const int32_t nodes = std::max(1, j_.nodes);
    const bool fits_now = Fits(room.free, nodes, gpn);
    int32_t free_total = 0;
    for (const auto& [n, f] : room.free) free_total += f;
    a_.evidence.push_back(
        {.kind = "free_gpus",
         .text = fmt::format("{} GPUs free in partition {} now; at most {} on "
                             "one node; the job asks for {} on each of {} node(s)",
                             free_total, j_.partition, MostFreeOnOneNode(room), gpn, nodes),
         .partition = j_.partition,
         .value = free_total,
         .source = "slurm"});
    std::vector<const JobView*> ahead = JobsAhead();
    std::optional<SimTime> shadow = ShadowTime(ahead);
    std::optional<SimTime> free_at = RunningJobsEvidence(room, nodes, gpn, fits_now);
    SuggestSmallerRequest(room, ahead.empty(), shadow);
    SuggestOtherPartition();
    if (fits_now) SuggestBackfillTimeLimit(shadow);
    std::string s =
        fmt::format("{} job(s) ahead of it in partition {}.", ahead.size(), j_.partition);
    if (free_at && !fits_now) {
      s += fmt::format(" Enough GPUs for it should be free {}.", Clock(*free_at, now_));
    } else if (fits_now) {
      s += " The GPUs it needs are free now, but held for a job ahead of it.";
    }
    return s;
  }

  std::vector<const JobView*> JobsAhead() {
    std::vector<const JobView*> ahead;
    for (const auto& o : view_.jobs) {
      if (o.job.id == j_.id || o.job.state != "PENDING" || o.job.partition != j_.partition) {
        continue;
      }
      if (IsHeldJob(o.job) || !Ahead(o.job, j_) || !Competing(o.job)) continue;
      ahead.push_back(&o);
    }
    std::sort(ahead.begin(), ahead.end(),
              [](const JobView* x, const JobView* y) { return Ahead(x->job, y->job); });
    for (size_t i = 0; i < ahead.size() && i < static_cast<size_t>(options_.max_listed); ++i) {
      const JobView& o = *ahead[i];
      std::optional<SimTime> start;
      if (o.start_estimate) start = o.start_estimate->start;
      a_.evidence.push_back(
          {.kind = "job_ahead",
           .text =
               fmt::format("job {} ({} GPUs, priority {}){}", o.job.id, o.job.gpus, o.job.priority,
                           start ? ", expected to start " + Clock(*start, now_) : ""),
           .job_id = o.job.id,
           .partition = o.job.partition,
           .at = start,
           .value = o.job.priority,
           .source = "schedmate"});
    }
    return ahead;
  }

  // A pending job that competes for GPUs now: not one waiting for a dependency, a begin time, a
  // limit or a partition state, which the scheduler passes over.
  bool Competing(const slurm::SlurmJob& o) const {
    switch (reasons_.Lookup(o.reason).kind) {
      case ReasonKind::kResources:
      case ReasonKind::kPriority:
      case ReasonKind::kTransient:
      case ReasonKind::kUnknown:
        return true;
      default:
        return false;
    }
  }

  // The earliest expected start among the jobs ahead: their reservations begin there, so a job
  // that ends before it can be backfilled without delaying them.
  static std::optional<SimTime> ShadowTime(const std::vector<const JobView*>& ahead) {
    std::optional<SimTime> shadow;
    for (const JobView* o : ahead) {
      if (!o->start_estimate || !o->start_estimate->start) continue;
      if (!shadow || *o->start_estimate->start < *shadow) shadow = o->start_estimate->start;
    }
    return shadow;
  }

  // Lists the running jobs on the partition's nodes by expected end; returns when enough GPUs
  // are free for the job if only running jobs ended (jobs ahead may take them first).
  std::optional<SimTime> RunningJobsEvidence(const PartitionRoom& room, int32_t nodes, int32_t gpn,
                                             bool fits_now) {
    struct Ending {
      const JobView* job;
      ExpectedEnd end;
    };
    std::vector<Ending> ending;
    for (const auto& o : view_.jobs) {
      if (o.job.state != "RUNNING") continue;
      bool here = std::any_of(o.job.node_names.begin(), o.job.node_names.end(),
                              [&](const std::string& n) { return room.nodes.count(n) > 0; });
      if (here) ending.push_back({&o, EndOf(o, now_)});
    }
    std::sort(ending.begin(), ending.end(), [](const Ending& x, const Ending& y) {
      if (x.end.at.has_value() != y.end.at.has_value()) return x.end.at.has_value();
      if (x.end.at != y.end.at) return *x.end.at < *y.end.at;
      return x.job->job.id < y.job->job.id;
    });
    std::map<std::string, int32_t> free = room.free;
    std::optional<SimTime> free_at;
    for (size_t i = 0; i < ending.size(); ++i) {
      const Ending& e = ending[i];
      if (i < static_cast<size_t>(options_.max_listed)) {
        a_.evidence.push_back(
            {.kind = "running_job",
             .text = fmt::format(
                 "job {} ({} GPUs on {}) {}", e.job->job.id, e.job->job.gpus, e.job->job.node_list,
                 e.end.at ? "expected to end " + Clock(*e.end.at, now_) + " (" + e.end.source + ")"
                          : "with no expected end"),
             .job_id = e.job->job.id,
             .node = e.job->job.node_list,
             .at = e.end.at,
             .value = e.job->job.gpus,
             .source = e.end.source});
      }
      if (fits_now || free_at || !e.end.at) continue;
      for (const auto& n : e.job->job.node_names)
        if (free.count(n)) free[n] += e.job->job.gpus_per_node;
      if (Fits(free, nodes, gpn)) free_at = e.end.at;
    }
    if (free_at) {
      a_.evidence.push_back({.kind = "gpus_free_at",
                             .text = "enough GPUs free for it " + Clock(*free_at, now_),
                             .at = free_at,
                             .source = "schedmate"});
    }
    return free_at;
  }

  void SuggestSmallerRequest(const PartitionRoom& room, bool first_in_line,
                             std::optional<SimTime> shadow) {
    const int32_t best = MostFreeOnOneNode(room);
    if (std::max(1, j_.nodes) != 1 || j_.gpus_per_node <= 1 || best < 1 ||
        best >= j_.gpus_per_node) {
      return;
    }
    // It starts now if nothing is ahead, or if backfill may place it before the first
    // reservation (its time limit ends before the shadow time).
    bool starts_now =
        first_in_line ||
        (shadow && j_.time_limit_min &&
         now_ + Duration::Minutes(*j_.time_limit_min) + options_.backfill_margin <= *shadow);
    a_.suggestions.push_back(
        {.change = fmt::format("--gres=gpu:{}", best),
         .expected_start = starts_now ? std::optional<SimTime>(now_) : std::nullopt,
         .why = fmt::format("{} GPUs are free on one node of partition {} now; the job asks "
                            "for {}",
                            best, j_.partition, j_.gpus_per_node)});
  }

  void SuggestOtherPartition() {
    std::set<std::string> partitions;
    for (const auto& n : view_.nodes)
      for (const auto& p : n.partitions) partitions.insert(p);
    for (const auto& p : partitions) {
      if (p == j_.partition) continue;
      PartitionRoom room = RoomOf(view_, p);
      if (!Fits(room.free, std::max(1, j_.nodes), j_.gpus_per_node)) continue;
      bool queue_empty = std::none_of(view_.jobs.begin(), view_.jobs.end(), [&](const JobView& o) {
        return o.job.state == "PENDING" && o.job.partition == p && !IsHeldJob(o.job);
      });
      a_.suggestions.push_back(
          {.change = "--partition=" + p,
           .expected_start = queue_empty ? std::optional<SimTime>(now_) : std::nullopt,
           .why = fmt::format("partition {} has {} GPUs free on enough nodes now{}", p,
                              MostFreeOnOneNode(room), queue_empty ? " and nothing waiting" : "")});
    }
  }

  void SuggestBackfillTimeLimit(std::optional<SimTime> shadow) {
    if (!shadow) return;
    const Duration gap = *shadow - now_ - options_.backfill_margin;
    const int64_t minutes = gap.seconds() / 60;
    if (minutes < 1) return;
    if (j_.time_limit_min && *j_.time_limit_min <= minutes) return;  // limit is not the problem
    std::string risk;
    if (job_.prediction) {
      const Duration need = job_.prediction->high > Duration::Zero() ? job_.prediction->high
                                                                     : job_.prediction->duration;
      if (need > Duration::Minutes(minutes)) {
        return;  // the advisor expects it to need longer: the shorter limit would kill it
      }
      risk = fmt::format("; the advisor expects it to need at most {}", FormatDuration(need));
    }
    a_.suggestions.push_back(
        {.change = fmt::format("--time={}", minutes),
         .expected_start = now_,
         .why = fmt::format("the GPUs it needs are free now and held for a job ahead from {}; "
                            "a limit of {} minutes lets backfill start it before then "
                            "(scontrol update JobId={} TimeLimit={} on the pending job){}",
                            Clock(*shadow, now_), minutes, j_.id, minutes, risk)});
  }

  std::string DependencySpecifics() {
    static const RE2 kDep("([a-z_]+):([0-9_]+)(?:\\(([a-z]+)\\))?");
    re2::StringPiece in(j_.dependency);
    std::string type, id, state;
    std::vector<std::string> ids;
    while (RE2::FindAndConsume(&in, kDep, &type, &id, &state)) {
      const JobView* dep = Find(id);
      std::optional<SimTime> end;
      std::string source;
      if (dep != nullptr && dep->job.state == "RUNNING") {
        ExpectedEnd e = EndOf(*dep, now_);
        end = e.at;
        source = e.source;
      }
      a_.evidence.push_back(
          {.kind = "dependency",
           .text = fmt::format("{} on job {}{}{}", type, id,
                               dep ? " (" + dep->job.state + ")" : " (no longer in the queue)",
                               end ? ", expected to end " + Clock(*end, now_) : ""),
           .job_id = id,
           .at = end,
           .source = source});
      ids.push_back(id);
    }
    if (ids.empty()) return "";
    return fmt::format("It waits for job(s) {}.", fmt::join(ids, ", "));
  }

  std::string BeginTimeSpecifics() {
    if (!j_.eligible) return "";
    a_.evidence.push_back({.kind = "begin_time",
                           .text = "not before " + Clock(*j_.eligible, now_),
                           .at = j_.eligible,
                           .source = "slurm"});
    return "It may start " + Clock(*j_.eligible, now_) + ".";
  }

  std::string HeldSpecifics() {
    if (reason_.code == "JobHeldUser") {
      a_.suggestions.push_back({.change = "scontrol release " + j_.id,
                                .why = "a user hold is lifted by the job's owner"});
    }
    return "";
  }

  std::string LimitSpecifics() {
    WhyEvidence e{.kind = "limit", .text = reason_.code, .source = "slurm"};
    if (!reason_.resource.empty()) {
      e.text = fmt::format("{} limit of {} ({}{})", reason_.limit, reason_.scope, reason_.resource,
                           reason_.per.empty() ? "" : ", " + reason_.per);
    }
    if (!j_.qos.empty() || !j_.account.empty()) {
      e.text += fmt::format("; account {}, QOS {}", j_.account.empty() ? "?" : j_.account,
                            j_.qos.empty() ? "?" : j_.qos);
    }
    a_.evidence.push_back(std::move(e));
    QosLimitValue();
    AssocLimitValue();
    if (reason_.kind == ReasonKind::kLimitGroup) {
      int64_t mine = 0;
      for (const auto& o : view_.jobs)
        if (o.job.state == "RUNNING" && o.job.user == j_.user) mine += o.job.gpus;
      a_.evidence.push_back({.kind = "user_running_gpus",
                             .text = fmt::format("{}'s running jobs hold {} GPUs", j_.user, mine),
                             .value = mine,
                             .source = "slurm"});
    }
    return "";
  }

  // A QOS limit's name and value (view_.qos, from sacctmgr) and, for a GPU limit, the largest
  // request it lets start now: per user, the user's running GPUs under the QOS count against it;
  // Grp, every running job's under the QOS; per job, the limit itself.
  void QosLimitValue() {
    if (reason_.scope != "QOS" || j_.qos.empty()) return;
    const slurm::QosLimits* q = FindQos(view_, j_.qos);
    const std::string column = QosColumn(reason_);
    if (q == nullptr || column.empty()) return;
    auto it = q->limits.find(column);
    if (it == q->limits.end()) return;
    const std::string tres = TresOf(reason_);
    std::optional<int64_t> value =
        tres.empty() ? ParseInt(it->second) : slurm::TresCount(it->second, tres);
    a_.evidence.push_back({.kind = "limit_value",
                           .text = fmt::format("QOS {} {}={}", q->name, column, it->second),
                           .name = fmt::format("QOS {} {}", q->name, column),
                           .value = value,
                           .source = "sacctmgr"});
    if (tres != "gres/gpu" || !value) return;
    int64_t used = 0;
    if (reason_.kind == ReasonKind::kLimitGroup) {
      for (const auto& o : view_.jobs) {
        if (o.job.state != "RUNNING" || o.job.qos != j_.qos) continue;
        if (reason_.per == "PerUser" && o.job.user != j_.user) continue;
        if (reason_.per == "PerAccount" && o.job.account != j_.account) continue;
        used += o.job.gpus;
      }
    }
    SuggestWithinGpuLimit("QOS " + q->name, column, *value, used);
  }

  // The largest GPU request a limit of `value` GPUs leaves room for with `used` counted against
  // it, when that is smaller than the job's and at least one.
  void SuggestWithinGpuLimit(const std::string& owner, const std::string& column, int64_t value,
                             int64_t used) {
    const int64_t room = value - used;
    if (room <= 0 || room >= j_.gpus) return;
    const int32_t nodes = std::max(1, j_.nodes);
    const PartitionRoom partition = RoomOf(view_, j_.partition);
    const bool fits = nodes == 1 ? Fits(partition.free, 1, static_cast<int32_t>(room)) : false;
    a_.suggestions.push_back(
        {.change = nodes == 1 ? fmt::format("--gres=gpu:{}", room) : fmt::format("--gpus={}", room),
         .expected_start = fits ? std::optional<SimTime>(now_) : std::nullopt,
         .why = fmt::format("{} allows {} GPUs ({}) and {} are in use under it, so a request of "
                            "{} is within the limit{}",
                            owner, value, column, used, room,
                            fits ? " and fits on the GPUs free now" : "")});
  }

  // Whether a running job counts against an association's Grp limits: a user association
  // counts its user's jobs in its account (and partition, when it names one), an account's
  // every job in its subtree.
  bool UnderAssoc(const slurm::SlurmJob& o, const slurm::AssocLimits& a) const {
    if (!a.user.empty()) {
      return o.user == a.user && o.account == a.account &&
             (a.partition.empty() || o.partition == a.partition);
    }
    return slurm::AccountUnder(view_.assocs, o.account, a.account);
  }

  // An association limit's name and value (view_.assocs, from sacctmgr): the nearest
  // association of the job's chain that sets the reason's column. For a GPU limit, what is in
  // use against it and the request it leaves room for (GrpTRES: fewer GPUs; GrpTRESRunMins: a
  // shorter time limit; MaxTRES: the per-job maximum).
  void AssocLimitValue() {
    if (reason_.scope != "Assoc" || view_.assocs.empty()) return;
    const std::string column = AssocColumn(reason_);
    if (column.empty()) return;
    for (const slurm::AssocLimits* as :
         slurm::AssocChain(view_.assocs, j_.account, j_.user, j_.partition)) {
      auto it = as->limits.find(column);
      if (it == as->limits.end()) continue;
      const std::string owner = AssocName(*as);
      const std::string tres = TresOf(reason_);
      std::optional<int64_t> value =
          tres.empty() ? ParseInt(it->second) : slurm::TresCount(it->second, tres);
      a_.evidence.push_back({.kind = "limit_value",
                             .text = fmt::format("{} {}={}", owner, column, it->second),
                             .name = fmt::format("{} {}", owner, column),
                             .value = value,
                             .source = "sacctmgr"});
      if (tres != "gres/gpu" || !value) return;
      if (column == "GrpTRES") {
        int64_t used = 0;
        for (const auto& o : view_.jobs)
          if (o.job.state == "RUNNING" && UnderAssoc(o.job, *as)) used += o.job.gpus;
        LimitUsed(owner + " " + column, used, "GPUs held by running jobs under it");
        SuggestWithinGpuLimit(owner, column, *value, used);
      } else if (column == "MaxTRES") {
        SuggestWithinGpuLimit(owner, column, *value, 0);
      } else if (column == "GrpTRESRunMins") {
        SuggestWithinRunMinutes(owner, *as, *value);
      }
      return;
    }
  }

  void LimitUsed(const std::string& name, int64_t used, std::string_view what) {
    a_.evidence.push_back({.kind = "limit_used",
                           .text = fmt::format("{}: {} {}", name, used, what),
                           .name = name,
                           .value = used,
                           .source = "slurm"});
  }

  // GrpTRESRunMins: each running job under the association counts its GPUs x the minutes left
  // of its time limit (rounded up); a job may start when its GPUs x time limit fit in the rest.
  // Suggests the longest time limit that does, when it is shorter than the job's.
  void SuggestWithinRunMinutes(const std::string& owner, const slurm::AssocLimits& as,
                               int64_t value) {
    int64_t used = 0;
    for (const auto& o : view_.jobs) {
      const slurm::SlurmJob& r = o.job;
      if (r.state != "RUNNING" || !UnderAssoc(r, as) || !r.time_limit_min || !r.start) continue;
      const double left =
          static_cast<double>(*r.time_limit_min) * 60 - (now_ - *r.start).seconds_f();
      used += r.gpus * static_cast<int64_t>(std::ceil(std::max(0.0, left) / 60));
    }
    LimitUsed(owner + " GrpTRESRunMins", used,
              "GPU-minutes left in the time limits of running jobs under it");
    const int64_t gpus = std::max(1, j_.gpus);
    const int64_t minutes = (value - used) / gpus;
    if (minutes < 1 || (j_.time_limit_min && minutes >= *j_.time_limit_min)) return;
    const PartitionRoom partition = RoomOf(view_, j_.partition);
    const bool fits = std::max(1, j_.nodes) == 1 &&
                      Fits(partition.free, 1, static_cast<int32_t>(std::max(1, j_.gpus)));
    a_.suggestions.push_back(
        {.change = fmt::format("--time={}", minutes),
         .expected_start = fits ? std::optional<SimTime>(now_) : std::nullopt,
         .why = fmt::format("{} allows {} GPU-minutes of running time limits (GrpTRESRunMins) "
                            "and {} are held, so {} GPU(s) for {} minutes is within the limit{}",
                            owner, value, used, gpus, minutes,
                            fits ? " and fits on the GPUs free now" : "")});
  }

  const JobView* Find(const std::string& id) const {
    for (const auto& o : view_.jobs)
      if (o.job.id == id) return &o;
    return nullptr;
  }

  const ServiceView& view_;
  const JobView& job_;
  const slurm::SlurmJob& j_;
  SimTime now_;
  WhyOptions options_;
  const ReasonCatalogue& reasons_;
  ReasonInfo reason_;
  WhyAnswer a_;
};

nlohmann::json TimeJson(const std::optional<SimTime>& t) {
  return t ? nlohmann::json(t->seconds()) : nlohmann::json(nullptr);
}

}  // namespace

Result<WhyAnswer> ExplainJob(const ServiceView& view, const std::string& job_id, SimTime now,
                             const ReasonCatalogue& reasons, const WhyOptions& options) {
  for (const auto& j : view.jobs) {
    if (j.job.id == job_id) return Explainer(view, j, now, reasons, options).Run();
  }
  return Status::NotFound("no job " + job_id + " in the queue schedmate sees");
}

nlohmann::json WhyAnswerToJson(const WhyAnswer& a) {
  nlohmann::json evidence = nlohmann::json::array();
  for (const auto& e : a.evidence) {
    nlohmann::json j = {{"kind", e.kind}, {"text", e.text}};
    if (!e.job_id.empty()) j["job_id"] = e.job_id;
    if (!e.node.empty()) j["node"] = e.node;
    if (!e.partition.empty()) j["partition"] = e.partition;
    if (e.at) j["at"] = e.at->seconds();
    if (e.value) j["value"] = *e.value;
    if (!e.source.empty()) j["source"] = e.source;
    if (!e.name.empty()) j["name"] = e.name;
    evidence.push_back(std::move(j));
  }
  nlohmann::json suggestions = nlohmann::json::array();
  for (const auto& s : a.suggestions) {
    suggestions.push_back(
        {{"change", s.change}, {"expected_start", TimeJson(s.expected_start)}, {"why", s.why}});
  }
  return {{"job_id", a.job_id},
          {"state", a.state},
          {"reason_code", a.reason_code},
          {"reason_kind", a.reason_kind},
          {"reason_known", a.reason_known},
          {"explanation", a.explanation},
          {"evidence", std::move(evidence)},
          {"expected_start", TimeJson(a.expected_start)},
          {"suggestions", std::move(suggestions)}};
}

}  // namespace schedmate::service
