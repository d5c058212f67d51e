#include "service/service_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/strings.h"

namespace schedmate::service {
namespace {

const store::Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE service_kv(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE service_runs(run_key TEXT PRIMARY KEY, job_id TEXT NOT NULL, state TEXT NOT NULL,
                          handled_us INTEGER NOT NULL DEFAULT 0);
CREATE TABLE service_failures(id INTEGER PRIMARY KEY AUTOINCREMENT, run_key TEXT NOT NULL UNIQUE,
  job_id TEXT NOT NULL, at_us INTEGER NOT NULL, state TEXT NOT NULL, exit_code INTEGER NOT NULL,
  node_list TEXT NOT NULL, cls TEXT NOT NULL, category TEXT NOT NULL, reason TEXT NOT NULL,
  evidence_line INTEGER NOT NULL, evidence TEXT NOT NULL, log_copy TEXT NOT NULL, engine TEXT NOT NULL);
CREATE INDEX service_failures_job ON service_failures(job_id);
CREATE TABLE service_actions(id INTEGER PRIMARY KEY AUTOINCREMENT, at_us INTEGER NOT NULL,
  job_id TEXT NOT NULL, node TEXT NOT NULL, kind TEXT NOT NULL, reason TEXT NOT NULL,
  dry_run INTEGER NOT NULL, outcome TEXT NOT NULL, detail TEXT NOT NULL);
CREATE INDEX service_actions_job ON service_actions(job_id, kind);
CREATE TABLE service_metrics(job_id TEXT NOT NULL, at_us INTEGER NOT NULL, step INTEGER,
  loss REAL, step_time_s REAL, progress REAL, eta_s REAL, stalled INTEGER NOT NULL,
  slowdown INTEGER NOT NULL, PRIMARY KEY(job_id, at_us));
CREATE TABLE service_start_estimates(job_id TEXT PRIMARY KEY, submit_us INTEGER NOT NULL,
  first_at_us INTEGER NOT NULL, first_start_us INTEGER NOT NULL, last_at_us INTEGER NOT NULL,
  last_start_us INTEGER NOT NULL, slurm_start_us INTEGER, actual_start_us INTEGER);
)sql"},
    {2, R"sql(
ALTER TABLE service_failures ADD COLUMN checkpoint TEXT NOT NULL DEFAULT '';
ALTER TABLE service_actions ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE service_actions ADD COLUMN release_at_us INTEGER;
ALTER TABLE service_actions ADD COLUMN exclude_nodes TEXT NOT NULL DEFAULT '';
ALTER TABLE service_actions ADD COLUMN checkpoint TEXT NOT NULL DEFAULT '';
)sql"},
    {3, R"sql(
CREATE TABLE service_priorities(job_id TEXT PRIMARY KEY, submit_us INTEGER NOT NULL,
  original INTEGER NOT NULL, nice INTEGER NOT NULL, explicit INTEGER NOT NULL,
  left_alone TEXT NOT NULL, ours INTEGER, first_seen_us INTEGER NOT NULL,
  restore TEXT NOT NULL DEFAULT '');
CREATE INDEX service_priorities_outstanding ON service_priorities(restore, ours);
)sql"},
    {4, R"sql(
ALTER TABLE service_actions ADD COLUMN budget INTEGER NOT NULL DEFAULT 0;
ALTER TABLE service_actions ADD COLUMN delay_us INTEGER;
ALTER TABLE service_actions ADD COLUMN skip_reason TEXT NOT NULL DEFAULT '';
)sql"},
    // Shared stores (leader.h): the lease and its epoch (the fencing token written with every
    // action), claims of runs whose handling has not finished, open intents found fast.
    {5, R"sql(
CREATE TABLE service_leader(id INTEGER PRIMARY KEY CHECK (id = 1), holder TEXT NOT NULL,
  epoch INTEGER NOT NULL, expires_us INTEGER NOT NULL, renewed_us INTEGER NOT NULL,
  backend_pid INTEGER NOT NULL DEFAULT 0);
ALTER TABLE service_runs ADD COLUMN done INTEGER NOT NULL DEFAULT 1;
ALTER TABLE service_actions ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0;
CREATE INDEX service_actions_outcome ON service_actions(outcome, id);
)sql"},
    // What running jobs used (gpu_probe.h): one row per probe with GPU readings, for the report.
    {6, R"sql(
CREATE TABLE service_usage(job_id TEXT NOT NULL, at_us INTEGER NOT NULL, gpus INTEGER NOT NULL,
  gpu_util REAL NOT NULL, PRIMARY KEY(job_id, at_us));
)sql"},
    // Several clusters in one store (slurm.clusters): every row names its cluster; rows written
    // before get 'default', the name of the one cluster of a configuration without clusters.
    // Tables keyed by job id are rebuilt with the cluster in their key (job ids repeat across
    // clusters); run keys are qualified by the companion instead; one lease row per cluster.
    {7, R"sql(
ALTER TABLE service_runs ADD COLUMN cluster TEXT NOT NULL DEFAULT 'default';
ALTER TABLE service_failures ADD COLUMN cluster TEXT NOT NULL DEFAULT 'default';
ALTER TABLE service_actions ADD COLUMN cluster TEXT NOT NULL DEFAULT 'default';
CREATE INDEX service_actions_cluster ON service_actions(cluster, job_id, kind);
CREATE TABLE service_metrics_c(cluster TEXT NOT NULL, job_id TEXT NOT NULL, at_us INTEGER NOT NULL,
  step INTEGER, loss REAL, step_time_s REAL, progress REAL, eta_s REAL, stalled INTEGER NOT NULL,
  slowdown INTEGER NOT NULL, PRIMARY KEY(cluster, job_id, at_us));
INSERT INTO service_metrics_c SELECT 'default', job_id, at_us, step, loss, step_time_s, progress,
  eta_s, stalled, slowdown FROM service_metrics;
DROP TABLE service_metrics;
ALTER TABLE service_metrics_c RENAME TO service_metrics;
CREATE TABLE service_usage_c(cluster TEXT NOT NULL, job_id TEXT NOT NULL, at_us INTEGER NOT NULL,
  gpus INTEGER NOT NULL, gpu_util REAL NOT NULL, PRIMARY KEY(cluster, job_id, at_us));
INSERT INTO service_usage_c SELECT 'default', job_id, at_us, gpus, gpu_util FROM service_usage;
DROP TABLE service_usage;
ALTER TABLE service_usage_c RENAME TO service_usage;
CREATE TABLE service_start_estimates_c(cluster TEXT NOT NULL, job_id TEXT NOT NULL,
  submit_us INTEGER NOT NULL, first_at_us INTEGER NOT NULL, first_start_us INTEGER NOT NULL,
  last_at_us INTEGER NOT NULL, last_start_us INTEGER NOT NULL, slurm_start_us INTEGER,
  actual_start_us INTEGER, PRIMARY KEY(cluster, job_id));
INSERT INTO service_start_estimates_c SELECT 'default', job_id, submit_us, first_at_us,
  first_start_us, last_at_us, last_start_us, slurm_start_us, actual_start_us
  FROM service_start_estimates;
DROP TABLE service_start_estimates;
ALTER TABLE service_start_estimates_c RENAME TO service_start_estimates;
CREATE TABLE service_priorities_c(cluster TEXT NOT NULL, job_id TEXT NOT NULL,
  submit_us INTEGER NOT NULL, original INTEGER NOT NULL, nice INTEGER NOT NULL,
  explicit INTEGER NOT NULL, left_alone TEXT NOT NULL, ours INTEGER,
  first_seen_us INTEGER NOT NULL, restore TEXT NOT NULL DEFAULT '', PRIMARY KEY(cluster, job_id));
INSERT INTO service_priorities_c SELECT 'default', job_id, submit_us, original, nice, explicit,
  left_alone, ours, first_seen_us, restore FROM service_priorities;
DROP TABLE service_priorities;
ALTER TABLE service_priorities_c RENAME TO service_priorities;
CREATE INDEX service_priorities_outstanding ON service_priorities(cluster, restore, ours);
CREATE TABLE service_leader_c(cluster TEXT PRIMARY KEY, holder TEXT NOT NULL,
  epoch INTEGER NOT NULL, expires_us INTEGER NOT NULL, renewed_us INTEGER NOT NULL,
  backend_pid INTEGER NOT NULL DEFAULT 0);
INSERT INTO service_leader_c SELECT 'default', holder, epoch, expires_us, renewed_us, backend_pid
  FROM service_leader;
DROP TABLE service_leader;
ALTER TABLE service_leader_c RENAME TO service_leader;
)sql"},
    // A user's notice records what became of its plan's requeue (ActionRecord::requeue_outcome).
    {8, R"sql(
ALTER TABLE service_actions ADD COLUMN requeue_outcome TEXT NOT NULL DEFAULT '';
)sql"},
};

// The columns ReadActions reads, in its order.
constexpr std::string_view kActionColumns =
    "id, at_us, job_id, node, kind, reason, dry_run, outcome, detail, attempt, release_at_us,"
    " exclude_nodes, checkpoint, budget, delay_us, skip_reason, epoch, requeue_outcome";

std::string JoinNodes(const std::vector<std::string>& nodes) {
  std::string out;
  for (const auto& n : nodes) out += (out.empty() ? "" : ",") + n;
  return out;
}

std::vector<std::string> SplitNodes(const std::string& text) {
  std::vector<std::string> out;
  for (auto part : Split(text, ','))
    if (!part.empty()) out.emplace_back(part);
  return out;
}

std::optional<int64_t> OptTime(const std::optional<SimTime>& t) {
  return t ? std::optional<int64_t>(t->micros()) : std::nullopt;
}

}  // namespace

std::span<const store::Migration> ServiceMigrations() { return kMigrations; }

bool ValidClusterName(std::string_view name) {
  if (name.empty() || name.size() > 64 || !std::isalnum(static_cast<unsigned char>(name[0])))
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
}

std::string ClusterLiteral(std::string_view name) {
  // The name's characters cannot end or escape a literal; anything else is a bug upstream.
  if (!ValidClusterName(name)) return "'\x00invalid'";
  return "'" + std::string(name) + "'";
}

Result<std::unique_ptr<ServiceStore>> ServiceStore::Attach(store::Db& db,
                                                           std::string_view cluster) {
  if (!ValidClusterName(cluster)) {
    return Status::InvalidArgument(fmt::format("not a cluster name: '{}'", cluster));
  }
  SM_RETURN_IF_ERROR(db.Migrate("service", kMigrations));
  return std::unique_ptr<ServiceStore>(new ServiceStore(db, cluster));
}

std::string ServiceStore::Key(const std::string& key) const {
  return cluster_ == kDefaultCluster ? key : "cluster/" + cluster_ + "/" + key;
}

Result<std::optional<std::string>> ServiceStore::GetValue(const std::string& key) {
  SM_ASSIGN_OR_RETURN(auto st, db_.Prepare("SELECT value FROM service_kv WHERE key = ?"));
  st.BindText(1, Key(key));
  SM_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(st.ColumnText(0));
}

Status ServiceStore::SetValue(const std::string& key, const std::string& value) {
  SM_ASSIGN_OR_RETURN(auto st, db_.Prepare(store::UpsertSql("service_kv", "key, value", "key")));
  st.BindText(1, Key(key)).BindText(2, value);
  return st.Run();
}

Result<bool> ServiceStore::IsRunHandled(const std::string& run_key) {
  SM_ASSIGN_OR_RETURN(auto st,
                      db_.Prepare("SELECT 1 FROM service_runs WHERE run_key = ? AND " + scope_));
  st.BindText(1, run_key);
  return st.Step();
}

Status ServiceStore::MarkRunHandled(const std::string& run_key, const std::string& job_id,
                                    const std::string& state) {
  SM_ASSIGN_OR_RETURN(auto st,
                      db_.Prepare("INSERT INTO service_runs(run_key, job_id, state, done, cluster)"
                                  " VALUES(?, ?, ?, 0, ?) ON CONFLICT(run_key) DO NOTHING"));
  st.BindText(1, run_key).BindText(2, job_id).BindText(3, state).BindText(4, cluster_);
  return st.Run();
}

Result<int64_t> ServiceStore::AddFailure(const FailureRecord& f) {
  SM_ASSIGN_OR_RETURN(
      auto st, db_.Prepare(store::UpsertSql("service_failures",
                                            "run_key, job_id, at_us, state, exit_code, node_list,"
                                            " cls, category, reason, evidence_line, evidence,"
                                            " log_copy, engine, checkpoint, cluster",
                                            "run_key") +
                           " RETURNING id"));
  st.BindText(1, f.run_key)
      .BindText(2, f.job_id)
      .BindInt(3, f.at.micros())
      .BindText(4, f.state)
      .BindInt(5, f.exit_code)
      .BindText(6, f.node_list)
      .BindText(7, FailureClassName(f.cls))
      .BindText(8, f.category)
      .BindText(9, f.reason)
      .BindInt(10, f.evidence_line)
      .BindText(11, f.evidence)
      .BindText(12, f.log_copy)
      .BindText(13, f.engine)
      .BindText(14, f.checkpoint)
      .BindText(15, cluster_);
  return InsertedId(st);
}

namespace {
constexpr const char* kPriorityColumns =
    "job_id, submit_us, original, nice, explicit, left_alone, ours, first_seen_us, restore";

PriorityRecord ReadPriority(const store::Statement& st) {
  PriorityRecord r;
  r.job_id = st.ColumnText(0);
  r.submit = SimTime::FromMicros(st.ColumnInt(1));
  r.original = st.ColumnInt(2);
  r.nice = st.ColumnInt(3);
  r.explicit_priority = st.ColumnInt(4) != 0;
  r.left_alone = st.ColumnText(5);
  if (!st.IsNull(6)) r.ours = st.ColumnInt(6);
  r.first_seen = SimTime::FromMicros(st.ColumnInt(7));
  r.restore = st.ColumnText(8);
  return r;
}
}  // namespace

Result<std::optional<PriorityRecord>> ServiceStore::FindPriority(const std::string& job_id) {
  SM_ASSIGN_OR_RETURN(auto st,
                      db_.Prepare(std::string("SELECT ") + kPriorityColumns +
                                  " FROM service_priorities WHERE job_id = ? AND " + scope_));
  st.BindText(1, job_id);
  SM_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::optional<PriorityRecord>();
  return std::optional<PriorityRecord>(ReadPriority(st));
}

Status ServiceStore::PutPriority(const PriorityRecord& r) {
  SM_ASSIGN_OR_RETURN(
      auto st,
      db_.Prepare(store::UpsertSql(
          "service_priorities", std::string(kPriorityColumns) + ", cluster", "cluster, job_id")));
  st.BindText(1, r.job_id)
      .BindInt(2, r.submit.micros())
      .BindInt(3, r.original)
      .BindInt(4, r.nice)
      .BindInt(5, r.explicit_priority ? 1 : 0)
      .BindText(6, r.left_alone)
      .BindOptionalInt(7, r.ours)
      .BindInt(8, r.first_seen.micros())
      .BindText(9, r.restore)
      .BindText(10, cluster_);
  return st.Run();
}

Status ServiceStore::SetOurPriority(const std::string& job_id, int64_t value) {
  SM_ASSIGN_OR_RETURN(
      auto st,
      db_.Prepare("UPDATE service_priorities SET ours = ?, restore = '' WHERE job_id = ? AND " +
                  scope_));
  st.BindInt(1, value).BindText(2, job_id);
  return st.Run();
}

Status ServiceStore::SetPriorityRestore(const std::string& job_id, const std::string& outcome) {
  SM_ASSIGN_OR_RETURN(
      auto st,
      db_.Prepare("UPDATE service_priorities SET restore = ? WHERE job_id = ? AND " + scope_));
  st.BindText(1, outcome).BindText(2, job_id);
  return st.Run();
}

Result<std::vector<PriorityRecord>> ServiceStore::OutstandingPriorities() {
  SM_ASSIGN_OR_RETURN(auto st, db_.Prepare(std::string("SELECT ") + kPriorityColumns +
                                           " FROM service_priorities WHERE ours IS NOT NULL AND "
                                           "restore IN ('', 'restoring') AND " +
                                           scope_ + " ORDER BY first_seen_us, job_id"));
  std::vector<PriorityRecord> out;
  while (true) {
    SM_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out.push_back(ReadPriority(st));
  }
  return out;
}

Result<int64_t> ServiceStore::AddAction(const ActionRecord& a) {
  // The intent and the leadership check commit together: a deposed leader records nothing.
  SM_ASSIGN_OR_RETURN(auto tx, store::Transaction::Start(db_));
  SM_RETURN_IF_ERROR(CheckFence());
  SM_ASSIGN_OR_RETURN(
      auto st,
      db_.Prepare(
          "INSERT INTO service_actions(at_us, job_id, node, kind, reason, dry_run, outcome, detail,"
          " attempt, release_at_us, exclude_nodes, checkpoint, budget, delay_us, skip_reason,"
          " epoch, cluster, requeue_outcome) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
          " RETURNING id"));
  st.BindInt(1, a.at.micros())
      .BindText(2, a.job_id)
      .BindText(3, a.node)
      .BindText(4, std::string(ActionKindName(a.kind)))
      .BindText(5, a.reason)
      .BindInt(6, a.dry_run ? 1 : 0)
      .BindText(7, std::string(ActionOutcomeName(a.outcome)))
      .BindText(8, a.detail)
      .BindInt(9, a.attempt)
      .BindOptionalInt(10, OptTime(a.release_at))
      .BindText(11, JoinNodes(a.exclude_nodes))
      .BindText(12, a.checkpoint)
      .BindInt(13, a.budget)
      .BindOptionalInt(14, a.delay ? std::optional<int64_t>(a.delay->micros()) : std::nullopt)
      .BindText(15, a.skip_reason)
      .BindInt(16, fence_ ? fence_->epoch : 0)
      .BindText(17, cluster_)
      .BindText(18, a.requeue_outcome ? std::string(ActionOutcomeName(*a.requeue_outcome)) : "");
  SM_ASSIGN_OR_RETURN(int64_t id, InsertedId(st));
  SM_RETURN_IF_ERROR(tx->Commit());
  return id;
}

Status ServiceStore::CheckFence() {
  if (!fence_) return Status::Ok();
  // An UPDATE, not a SELECT: it takes the lease row's lock until commit, so a takeover (which
  // bumps the epoch) is ordered before or after this transaction, never beside it.
  SM_ASSIGN_OR_RETURN(auto st, db_.Prepare("UPDATE service_leader SET holder = holder WHERE " +
                                           scope_ + " AND holder = ? AND epoch = ?"));
  st.BindText(1, fence_->holder).BindInt(2, fence_->epoch);
  SM_RETURN_IF_ERROR(st.Run());
  if (db_.ChangedRows() != 1) {
    return Status::FailedPrecondition(
        fmt::format("not the leader: lease epoch {} of {} is no longer current", fence_->epoch,
                    fence_->holder));
  }
  return Status::Ok();
}

Result<int64_t> ServiceStore::InsertedId(store::Statement& st) {
  SM_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return Status::Internal("insert returned no id");
  int64_t id = st.ColumnInt(0);
  st.Reset();
  return id;
}

Status ServiceStore::UpdateActionResult(const ActionRecord& a) {
  SM_ASSIGN_OR_RETURN(auto tx, store::Transaction::Start(db_));
  SM_RETURN_IF_ERROR(CheckFence());
  SM_ASSIGN_OR_RETURN(auto st, db_.Prepare("UPDATE service_actions SET outcome = ?, detail = ?,"
                                           " exclude_nodes = ?, skip_reason = ? WHERE id = ? AND " +
                                           scope_));
  st.BindText(1, std::string(ActionOutcomeName(a.outcome)))
      .BindText(2, a.detail)
      .BindText(3, JoinNodes(a.exclude_nodes))
      .BindText(4, a.skip_reason);
  st.BindInt(5, a.id);
  SM_RETURN_IF_ERROR(st.Run());
  return tx->Commit();
}

Result<std::vector<FailureRecord>> ServiceStore::RecentFailures(int64_t limit) {
  SM_ASSIGN_OR_RETURN(
      auto st,
      db_.Prepare(
          "SELECT id, run_key, job_id, at_us, state, exit_code, node_list, cls, category, reason,"
          " evidence_line, evidence, log_copy, engine, checkpoint FROM service_failures WHERE " +
          scope_ + " ORDER BY id DESC LIMIT ?"));
  st.BindInt(1, limit);
  std::vector<FailureRecord> out;
  while (true) {
    SM_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    FailureRecord f;
    f.id = st.ColumnInt(0);
    f.run_key = st.ColumnText(1);
    f.job_id = st.ColumnText(2);
    f.at = SimTime::FromMicros(st.ColumnInt(3));
    f.state = st.ColumnText(4);
    f.exit_code = static_cast<int32_t>(st.ColumnInt(5));
    f.node_list = st.ColumnText(6);
    auto cls = ParseFailureClass(st.ColumnText(7));
    if (!cls.ok()) {
      return Status::DataLoss(
          fmt::format("service_failures row {}: {}", f.id, cls.status().message()));
    }
    f.cls = *cls;
    f.category = st.ColumnText(8);
    f.reason = st.ColumnText(9);
    f.evidence_line = st.ColumnInt(10);
    f.evidence = st.ColumnText(11);
    f.log_copy = st.ColumnText(12);
    f.engine = st.ColumnText(13);
    f.checkpoint = st.ColumnText(14);
    out.push_back(std::move(f));
  }
  return out;
}

Result<std::vector<ActionRecord>> ServiceStore::RecentActions(int64_t limit) {
  SM_ASSIGN_OR_RETURN(
      auto st,
      db_.Prepare(fmt::format("SELECT {} FROM service_actions WHERE {} ORDER BY id DESC LIMIT ?",
                              kActionColumns, scope_)));
  st.BindInt(1, limit);
  return ReadActions(st);
}

Result<std::vector<ActionRecord>> ServiceStore::OpenIntents() {
  SM_ASSIGN_OR_RETURN(
      auto st,
      db_.Prepare(fmt::format("SELECT {} FROM service_actions WHERE outcome = ? AND {} ORDER BY id",
                              kActionColumns, scope_)));
  st.BindText(1, std::string(ActionOutcomeName(ActionOutcome::kPlanned)));
  return ReadActions(st);
}

Result<std::vector<ActionRecord>> ServiceStore::ReadActions(store::Statement& st) {
  std::vector<ActionRecord> out;
  while (true) {
    SM_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    ActionRecord a;
    a.id = st.ColumnInt(0);
    auto kind = ParseActionKind(st.ColumnText(4));
    auto outcome = ParseActionOutcome(st.ColumnText(7));
    std::string requeue_text = st.ColumnText(17);
    auto requeue = ParseActionOutcome(requeue_text.empty() ? "planned" : requeue_text);
    for (const Status* bad : {&kind.status(), &outcome.status(), &requeue.status()}) {
      if (!bad->ok()) {
        return Status::DataLoss(fmt::format("service_actions row {}: {}", a.id, bad->message()));
      }
    }
    a.kind = *kind;
    a.outcome = *outcome;
    a.at = SimTime::FromMicros(st.ColumnInt(1));
    a.job_id = st.ColumnText(2);
    a.node = st.ColumnText(3);
    a.reason = st.ColumnText(5);
    a.dry_run = st.ColumnInt(6) != 0;
    a.detail = st.ColumnText(8);
    a.attempt = static_cast<int32_t>(st.ColumnInt(9));
    if (auto v = st.ColumnOptionalInt(10)) a.release_at = SimTime::FromMicros(*v);
    a.exclude_nodes = SplitNodes(st.ColumnText(11));
    a.checkpoint = st.ColumnText(12);
    a.budget = static_cast<int32_t>(st.ColumnInt(13));
    if (auto v = st.ColumnOptionalInt(14)) a.delay = Duration::Micros(*v);
    a.skip_reason = st.ColumnText(15);
    a.epoch = st.ColumnInt(16);
    if (!requeue_text.empty()) a.requeue_outcome = *requeue;
    out.push_back(std::move(a));
  }
  return out;
}

namespace {
std::string Name(ActionKind k) { return std::string(ActionKindName(k)); }
std::string Name(ActionOutcome o) { return std::string(ActionOutcomeName(o)); }
}  // namespace

Result<bool> ServiceStore::NodeDrainedBySchedmate(const std::string& node) {
  // The latest drain or resume schedmate made of this node that may have reached Slurm.
  SM_ASSIGN_OR_RETURN(
      auto st,
      db_.Prepare("SELECT kind FROM service_actions WHERE node = ? AND dry_run = 0 AND " + scope_ +
                  " AND ((kind = ? AND outcome IN (?, ?))"
                  " OR (kind = ? AND outcome = ?))"
                  " ORDER BY id DESC LIMIT 1"));
  st.BindText(1, node)
      .BindText(2, Name(ActionKind::kDrainNode))
      .BindText(3, Name(ActionOutcome::kDone))
      .BindText(4, Name(ActionOutcome::kInterrupted))
      .BindText(5, Name(ActionKind::kResume))
      .BindText(6, Name(ActionOutcome::kDone));
  SM_ASSIGN_OR_RETURN(bool row, st.Step());
  return row && st.ColumnText(0) == Name(ActionKind::kDrainNode);
}

Result<int64_t> ServiceStore::CountRequeues(const std::string& job_id) {
  SM_ASSIGN_OR_RETURN(auto st,
                      db_.Prepare("SELECT COUNT(*) FROM service_actions WHERE job_id = ? AND "
                                  "kind = ? AND outcome IN (?, ?, ?) AND " +
                                  scope_));
  st.BindText(1, job_id)
      .BindText(2, Name(ActionKind::kRequeue))
      .BindText(3, Name(ActionOutcome::kPlanned))
      .BindText(4, Name(ActionOutcome::kDone))
      .BindText(5, Name(ActionOutcome::kInterrupted));
  SM_ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.ColumnInt(0) : 0;
}

Status ServiceStore::FinishRun(const std::string& run_key) {
  SM_ASSIGN_OR_RETURN(
      auto st, db_.Prepare("UPDATE service_runs SET done = 1 WHERE run_key = ? AND " + scope_));
  st.BindText(1, run_key);
  return st.Run();
}

Result<int64_t> ServiceStore::ReleaseUnfinishedRuns() {
  SM_ASSIGN_OR_RETURN(auto st,
                      db_.Prepare("DELETE FROM service_runs WHERE done = 0 AND " + scope_));
  SM_RETURN_IF_ERROR(st.Run());
  return db_.ChangedRows();
}

Result<int64_t> ServiceStore::MarkInterruptedActions() {
  SM_ASSIGN_OR_RETURN(auto tx, store::Transaction::Start(db_));
  SM_ASSIGN_OR_RETURN(
      auto count,
      db_.Prepare("SELECT COUNT(*) FROM service_actions WHERE outcome = ? AND " + scope_));
  count.BindText(1, Name(ActionOutcome::kPlanned));
  SM_ASSIGN_OR_RETURN(bool row, count.Step());
  int64_t n = row ? count.ColumnInt(0) : 0;
  if (n == 0) return n;
  SM_ASSIGN_OR_RETURN(
      auto st, db_.Prepare("UPDATE service_actions SET outcome = ?, detail = "
                           "'schedmate stopped after recording this action and before finishing "
                           "it; not retried (check Slurm). Planned: ' || detail"
                           " WHERE outcome = ? AND " +
                           scope_));
  st.BindText(1, Name(ActionOutcome::kInterrupted)).BindText(2, Name(ActionOutcome::kPlanned));
  SM_RETURN_IF_ERROR(st.Run());
  SM_RETURN_IF_ERROR(tx->Commit());
  return n;
}

Status ServiceStore::AddMetrics(const std::vector<MetricSample>& samples) {
  if (samples.empty()) return Status::Ok();
  SM_ASSIGN_OR_RETURN(auto tx, store::Transaction::Start(db_));
  SM_ASSIGN_OR_RETURN(auto st, db_.Prepare(store::UpsertSql("service_metrics",
                                                            "job_id, at_us, step, loss,"
                                                            " step_time_s, progress, eta_s,"
                                                            " stalled, slowdown, cluster",
                                                            "cluster, job_id, at_us")));
  for (const auto& m : samples) {
    st.BindText(1, m.job_id)
        .BindInt(2, m.at.micros())
        .BindOptionalInt(3, m.step)
        .BindOptionalDouble(4, m.loss)
        .BindOptionalDouble(5, m.step_time_s)
        .BindOptionalDouble(6, m.progress)
        .BindOptionalDouble(7, m.eta_s)
        .BindInt(8, m.stalled ? 1 : 0)
        .BindInt(9, m.slowdown ? 1 : 0)
        .BindText(10, cluster_);
    SM_RETURN_IF_ERROR(st.Run());
  }
  return tx->Commit();
}

Result<std::vector<MetricSample>> ServiceStore::MetricSeries(const std::string& job_id,
                                                             int64_t limit) {
  SM_ASSIGN_OR_RETURN(auto st, db_.Prepare("SELECT at_us, step, loss, step_time_s, progress, "
                                           "eta_s, stalled, slowdown FROM service_metrics"
                                           " WHERE job_id = ? AND " +
                                           scope_ + " ORDER BY at_us DESC LIMIT ?"));
  st.BindText(1, job_id).BindInt(2, limit);
  std::vector<MetricSample> out;
  while (true) {
    SM_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    MetricSample m;
    m.job_id = job_id;
    m.at = SimTime::FromMicros(st.ColumnInt(0));
    m.step = st.ColumnOptionalInt(1);
    m.loss = st.ColumnOptionalDouble(2);
    m.step_time_s = st.ColumnOptionalDouble(3);
    m.progress = st.ColumnOptionalDouble(4);
    m.eta_s = st.ColumnOptionalDouble(5);
    m.stalled = st.ColumnInt(6) != 0;
    m.slowdown = st.ColumnInt(7) != 0;
    out.push_back(std::move(m));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

Status ServiceStore::AddUsage(const UsageSample& u) {
  SM_ASSIGN_OR_RETURN(auto st, db_.Prepare(store::UpsertSql(
                                   "service_usage", "job_id, at_us, gpus, gpu_util, cluster",
                                   "cluster, job_id, at_us")));
  st.BindText(1, u.job_id).BindInt(2, u.at.micros()).BindInt(3, u.gpus).BindDouble(4, u.gpu_util);
  st.BindText(5, cluster_);
  return st.Run();
}

Result<std::optional<double>> ServiceStore::MeanGpuUtilisation(const std::string& job_id,
                                                               SimTime since, SimTime until) {
  SM_ASSIGN_OR_RETURN(auto st, db_.Prepare("SELECT AVG(gpu_util), COUNT(*) FROM service_usage"
                                           " WHERE job_id = ? AND at_us >= ? AND at_us < ? AND " +
                                           scope_));
  st.BindText(1, job_id).BindInt(2, since.micros()).BindInt(3, until.micros());
  SM_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row || st.ColumnInt(1) == 0) return std::optional<double>();
  return st.ColumnOptionalDouble(0);
}

Status ServiceStore::PutStartEstimate(const StartEstimateRecord& r) {
  SM_ASSIGN_OR_RETURN(
      auto st,
      db_.Prepare(
          "INSERT INTO service_start_estimates(job_id, submit_us, first_at_us, first_start_us, "
          "last_at_us,"
          " last_start_us, slurm_start_us, cluster) VALUES(?,?,?,?,?,?,?,?)"
          " ON CONFLICT(cluster, job_id) DO UPDATE SET"
          " last_at_us = excluded.last_at_us, last_start_us = excluded.last_start_us,"
          " slurm_start_us = excluded.slurm_start_us WHERE actual_start_us IS NULL"));
  st.BindText(1, r.job_id)
      .BindInt(2, r.submit.micros())
      .BindInt(3, r.first_at.micros())
      .BindInt(4, r.first_start.micros())
      .BindInt(5, r.last_at.micros())
      .BindInt(6, r.last_start.micros())
      .BindOptionalInt(7, OptTime(r.slurm_start))
      .BindText(8, cluster_);
  return st.Run();
}

Status ServiceStore::SetActualStart(const std::string& job_id, SimTime start) {
  SM_ASSIGN_OR_RETURN(auto st, db_.Prepare("UPDATE service_start_estimates SET actual_start_us = ? "
                                           "WHERE job_id = ? AND actual_start_us IS NULL AND " +
                                           scope_));
  st.BindInt(1, start.micros()).BindText(2, job_id);
  return st.Run();
}

Result<std::vector<StartEstimateRecord>> ServiceStore::StartEstimates(int64_t limit) {
  SM_ASSIGN_OR_RETURN(
      auto st,
      db_.Prepare(
          "SELECT job_id, submit_us, first_at_us, first_start_us, last_at_us, last_start_us, "
          "slurm_start_us,"
          " actual_start_us FROM service_start_estimates WHERE " +
          scope_ + " ORDER BY submit_us, job_id LIMIT ?"));
  st.BindInt(1, limit);
  std::vector<StartEstimateRecord> out;
  while (true) {
    SM_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    StartEstimateRecord r;
    r.job_id = st.ColumnText(0);
    r.submit = SimTime::FromMicros(st.ColumnInt(1));
    r.first_at = SimTime::FromMicros(st.ColumnInt(2));
    r.first_start = SimTime::FromMicros(st.ColumnInt(3));
    r.last_at = SimTime::FromMicros(st.ColumnInt(4));
    r.last_start = SimTime::FromMicros(st.ColumnInt(5));
    if (auto v = st.ColumnOptionalInt(6)) r.slurm_start = SimTime::FromMicros(*v);
    if (auto v = st.ColumnOptionalInt(7)) r.actual_start = SimTime::FromMicros(*v);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace schedmate::service
