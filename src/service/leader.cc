#include "service/leader.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "core/strings.h"
#include "slurm/slurm_parsers.h"

namespace schedmate::service {

std::string_view RoleName(Role r) { return r == Role::kLeader ? "leader" : "follower"; }

std::string DefaultInstanceId() {
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return fmt::format("{}:{}", host[0] != '\0' ? host : "localhost", getpid());
}

// ---------------------------------------------------------------------------------------------
// PgLeaderElection

namespace {
// The database clock in microseconds, so instances on hosts with skewed clocks agree.
constexpr const char* kNowUs = "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)";
}  // namespace

Result<std::unique_ptr<PgLeaderElection>> PgLeaderElection::Open(const std::string& url,
                                                                 std::string id, Duration lease_ttl,
                                                                 std::string cluster) {
  if (!ValidClusterName(cluster)) {
    return Status::InvalidArgument("not a cluster name: '" + cluster + "'");
  }
  if (lease_ttl <= Duration::Zero()) return Status::InvalidArgument("lease ttl must be positive");
  // The lock lives on this session: never reopened silently (Renew() sees the loss).
  SM_ASSIGN_OR_RETURN(std::unique_ptr<store::PgDb> db,
                      store::PgDb::Open(url, /*auto_reconnect=*/false));
  if (id.empty()) id = DefaultInstanceId();
  return std::unique_ptr<PgLeaderElection>(
      new PgLeaderElection(std::move(db), std::move(id), lease_ttl, std::move(cluster)));
}

LeaderStatus PgLeaderElection::Current() const {
  std::lock_guard lock(mu_);
  return status_;
}

void PgLeaderElection::StepDown(LeaderStatus& s, const std::string& why) {
  s.role = Role::kFollower;
  s.last_error = why;
  // The lock goes with the session: a fresh session guarantees it is released.
  (void)db_->Reconnect();
}

Status PgLeaderElection::ReadLease(LeaderStatus& s, bool& stale, int& holder_pid) {
  SM_ASSIGN_OR_RETURN(auto st, db_->Prepare(std::string("SELECT holder, epoch, expires_us, "
                                                        "backend_pid, ") +
                                            kNowUs + " FROM service_leader WHERE cluster = " +
                                            ClusterLiteral(cluster_)));
  SM_ASSIGN_OR_RETURN(bool row, st.Step());
  stale = false;
  holder_pid = 0;
  if (!row) return Status::Ok();
  s.holder = st.ColumnText(0);
  s.epoch = st.ColumnInt(1);
  s.lease_expires = SimTime::FromMicros(st.ColumnInt(2));
  holder_pid = static_cast<int>(st.ColumnInt(3));
  stale = st.ColumnInt(4) > st.ColumnInt(2) + ttl_.micros();
  return Status::Ok();
}

Status PgLeaderElection::TryTakeOver(LeaderStatus& s) {
  // One lock per cluster; the default cluster's key is the one of a store without clusters.
  const std::string scope = cluster_ == kDefaultCluster
                                ? std::string("current_schema()")
                                : "current_schema() || '/' || " + ClusterLiteral(cluster_);
  SM_ASSIGN_OR_RETURN(auto lock,
                      db_->Prepare(fmt::format("SELECT pg_try_advisory_lock({}, hashtext({}))",
                                               kLeaderLockKey, scope)));
  SM_ASSIGN_OR_RETURN(bool row, lock.Step());
  bool got = row && lock.ColumnText(0) == "t";
  lock.Reset();
  if (!got) {
    bool stale = false;
    int pid = 0;
    SM_RETURN_IF_ERROR(ReadLease(s, stale, pid));
    if (stale && pid != 0) {
      // A leader that stopped renewing but whose session lingers: end the session, take over at
      // the next poll. Best effort (needs the same role or pg_signal_backend).
      SM_ASSIGN_OR_RETURN(auto kill, db_->Prepare("SELECT pg_terminate_backend(?)"));
      kill.BindInt(1, pid);
      (void)kill.Run();
    }
    return Status::Ok();
  }
  SM_ASSIGN_OR_RETURN(auto tx, store::Transaction::Start(*db_));
  SM_ASSIGN_OR_RETURN(auto cur, db_->Prepare("SELECT epoch FROM service_leader WHERE cluster = " +
                                             ClusterLiteral(cluster_) + " FOR UPDATE"));
  SM_ASSIGN_OR_RETURN(bool has, cur.Step());
  int64_t epoch = (has ? cur.ColumnInt(0) : 0) + 1;
  cur.Reset();
  SM_ASSIGN_OR_RETURN(
      auto put, db_->Prepare(fmt::format(
                    "INSERT INTO service_leader(cluster, holder, epoch, expires_us, renewed_us,"
                    " backend_pid) VALUES({1}, ?1, ?2, {0} + ?3, {0}, pg_backend_pid())"
                    " ON CONFLICT(cluster) DO UPDATE SET holder = excluded.holder, epoch ="
                    " excluded.epoch, expires_us = excluded.expires_us, renewed_us ="
                    " excluded.renewed_us, backend_pid = excluded.backend_pid"
                    " RETURNING expires_us",
                    kNowUs, ClusterLiteral(cluster_))));
  put.BindText(1, s.id).BindInt(2, epoch).BindInt(3, ttl_.micros());
  SM_ASSIGN_OR_RETURN(bool put_row, put.Step());
  if (put_row) s.lease_expires = SimTime::FromMicros(put.ColumnInt(0));
  put.Reset();
  SM_RETURN_IF_ERROR(tx->Commit());
  s.role = Role::kLeader;
  s.holder = s.id;
  s.epoch = epoch;
  s.became_leader = true;
  ++s.takeovers;
  return Status::Ok();
}

Status PgLeaderElection::RenewLease(LeaderStatus& s) {
  SM_ASSIGN_OR_RETURN(auto st,
                      db_->Prepare(fmt::format(
                          "UPDATE service_leader SET expires_us = {0} + ?, renewed_us = {0}"
                          " WHERE cluster = {1} AND holder = ? AND epoch = ? RETURNING expires_us",
                          kNowUs, ClusterLiteral(cluster_))));
  st.BindInt(1, ttl_.micros()).BindText(2, s.id).BindInt(3, s.epoch);
  SM_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) {
    return Status::FailedPrecondition(
        fmt::format("lease epoch {} was taken over by another instance", s.epoch));
  }
  s.lease_expires = SimTime::FromMicros(st.ColumnInt(0));
  return Status::Ok();
}

LeaderStatus PgLeaderElection::Renew() {
  LeaderStatus s = Current();
  s.became_leader = false;
  s.last_error.clear();
  if (!db_->Connected()) {
    s.role = Role::kFollower;
    if (Status r = db_->Reconnect(); !r.ok()) s.last_error = r.message();
  }
  if (s.last_error.empty()) {
    if (s.role == Role::kLeader) {
      if (Status r = RenewLease(s); !r.ok()) StepDown(s, "stepped down: " + r.message());
    } else if (Status t = TryTakeOver(s); !t.ok()) {
      StepDown(s, "taking over: " + t.message());
    }
  }
  std::lock_guard lock(mu_);
  status_ = s;
  return s;
}

void PgLeaderElection::Resign() {
  std::lock_guard lock(mu_);
  if (status_.role != Role::kLeader) return;
  // Expire the lease now and end the session (which drops the lock).
  if (auto st = db_->Prepare("UPDATE service_leader SET expires_us = 0 WHERE cluster = " +
                             ClusterLiteral(cluster_) + " AND holder = ? AND epoch = ?");
      st.ok()) {
    st->BindText(1, status_.id).BindInt(2, status_.epoch);
    (void)st->Run();
  }
  (void)db_->Reconnect();
  status_.role = Role::kFollower;
}

// ---------------------------------------------------------------------------------------------
// ReconcileIntents

namespace {

bool FailedState(const std::string& state) {
  return slurm::IsFinishedState(state) && state != "COMPLETED";
}

enum class Verdict { kConfirmed, kCompleted, kInterrupted, kRetryLater };

struct Settled {
  Verdict verdict;
  ActionOutcome outcome;
  std::string detail;
};

Settled Confirmed(std::string what) {
  return {Verdict::kConfirmed, ActionOutcome::kDone,
          "confirmed in Slurm by the next leader: " + std::move(what)};
}
Settled Interrupted(std::string why) {
  return {Verdict::kInterrupted, ActionOutcome::kInterrupted,
          "the leader stopped after recording this action; " + std::move(why)};
}
Settled Completed(const Status& s, std::string what) {
  if (s.ok())
    return {Verdict::kCompleted, ActionOutcome::kDone, "completed by the next leader: " + what};
  return {Verdict::kCompleted, ActionOutcome::kFailed,
          "the next leader tried to complete it: " + s.message()};
}

Settled SettleJobAction(const ActionRecord& a, slurm::SlurmBackend& backend, SimTime now) {
  auto shown = backend.ShowJob(a.job_id);
  if (!shown.ok()) {
    if (shown.status().code() == StatusCode::kNotFound) {
      return Interrupted("the job is gone from Slurm, so whether it happened cannot be told");
    }
    return {Verdict::kRetryLater, ActionOutcome::kPlanned, shown.status().message()};
  }
  bool is_requeue = a.kind == ActionKind::kRequeue;
  if (!FailedState(shown->state)) {
    return Confirmed(fmt::format("job {} is {} (restarts {})", a.job_id, ToLower(shown->state),
                                 shown->restarts));
  }
  if (is_requeue) {
    slurm::RequeueOptions options;
    options.exclude_nodes = a.exclude_nodes;
    options.delay = a.release_at && *a.release_at > now ? *a.release_at - now : Duration::Zero();
    auto report = backend.Requeue(a.job_id, options);
    return Completed(report.status(), "requeued job " + a.job_id);
  }
  auto report = backend.HoldForReview(a.job_id, "");
  return Completed(report.status(), "held job " + a.job_id);
}

Settled SettleNodeAction(const ActionRecord& a, slurm::SlurmBackend& backend) {
  auto nodes = backend.ListNodes();
  if (!nodes.ok()) return {Verdict::kRetryLater, ActionOutcome::kPlanned, nodes.status().message()};
  auto it = std::find_if(nodes->begin(), nodes->end(),
                         [&](const slurm::SlurmNode& n) { return n.name == a.node; });
  if (it == nodes->end()) return Interrupted("node " + a.node + " is no longer in Slurm");
  if (a.kind == ActionKind::kDrainNode) {
    if (it->drained()) return Confirmed("node " + a.node + " is drained");
    return Completed(backend.DrainNode(a.node, a.reason), "drained " + a.node);
  }
  if (!it->drained()) return Confirmed("node " + a.node + " is not drained");
  if (!StartsWith(it->reason, "schedmate")) {
    return Interrupted("node " + a.node + " is drained for someone else's reason");
  }
  return Completed(backend.ResumeNode(a.node), "resumed " + a.node);
}

}  // namespace

Result<ReconcileSummary> ReconcileIntents(ServiceStore& store, slurm::SlurmBackend& backend,
                                          int64_t epoch, SimTime now) {
  ReconcileSummary sum;
  SM_ASSIGN_OR_RETURN(std::vector<ActionRecord> open, store.OpenIntents());
  for (ActionRecord a : open) {
    if (a.epoch >= epoch) continue;  // this leader's own, in flight
    Settled s = Interrupted("nothing in Slurm to check; not repeated");
    if (a.dry_run) {
      s = Interrupted("a dry run; nothing was executed");
    } else if (a.kind == ActionKind::kRequeue || a.kind == ActionKind::kHold) {
      s = SettleJobAction(a, backend, now);
    } else if (a.kind == ActionKind::kDrainNode || a.kind == ActionKind::kResume) {
      s = SettleNodeAction(a, backend);
    }
    if (s.verdict == Verdict::kRetryLater) continue;
    a.outcome = s.outcome;
    a.detail = s.detail + (a.detail.empty() ? "" : ". Planned: " + a.detail);
    SM_RETURN_IF_ERROR(store.UpdateActionResult(a));
    if (s.verdict == Verdict::kConfirmed) ++sum.confirmed;
    if (s.verdict == Verdict::kCompleted) ++sum.completed;
    if (s.verdict == Verdict::kInterrupted) ++sum.interrupted;
  }
  SM_ASSIGN_OR_RETURN(sum.released_runs, store.ReleaseUnfinishedRuns());
  return sum;
}

}  // namespace schedmate::service
