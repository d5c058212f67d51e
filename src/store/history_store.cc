#include "store/history_store.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <utility>

namespace schedmate::store {
namespace {

const Migration kHistoryMigrations[] = {
    {1,
     "CREATE TABLE history_jobs ("
     " job_id TEXT PRIMARY KEY, \"user\" TEXT NOT NULL, vc TEXT NOT NULL, name TEXT NOT NULL,"
     " gpus_milli INTEGER NOT NULL, cpus INTEGER NOT NULL, nodes INTEGER NOT NULL,"
     " submit_us INTEGER NOT NULL, finish_us INTEGER, duration_us INTEGER NOT NULL,"
     " time_limit_us INTEGER, state TEXT NOT NULL,"
     " model TEXT NOT NULL, dataset TEXT NOT NULL, batch_size INTEGER NOT NULL,"
     " amp INTEGER NOT NULL, iterations INTEGER NOT NULL,"
     " fingerprint TEXT NOT NULL, metadata_json TEXT NOT NULL, source TEXT NOT NULL"
     ") WITHOUT ROWID;"
     "CREATE INDEX history_jobs_finish ON history_jobs(finish_us) WHERE finish_us IS NOT NULL;"
     "CREATE TABLE history_predictions ("
     " id INTEGER PRIMARY KEY, job_id TEXT NOT NULL, made_at_us INTEGER NOT NULL,"
     " estimator TEXT NOT NULL, duration_us INTEGER NOT NULL, low_us INTEGER NOT NULL,"
     " high_us INTEGER NOT NULL, confidence REAL NOT NULL, explanation TEXT NOT NULL,"
     " neighbours_json TEXT NOT NULL);"
     "CREATE INDEX history_predictions_job ON history_predictions(job_id, id);"},
    {2, "CREATE INDEX history_jobs_user ON history_jobs(\"user\", finish_us);"},
};

const Migration kEmbeddingMigrations[] = {
    {1,
     "CREATE TABLE history_embeddings ("
     " job_id TEXT PRIMARY KEY, embedder TEXT NOT NULL, dimension INTEGER NOT NULL,"
     " vector BLOB NOT NULL);"
     "CREATE TABLE history_embedder ("
     " id INTEGER PRIMARY KEY CHECK (id = 1), name TEXT NOT NULL, dimension INTEGER NOT NULL);"},
    // Vectors are keyed by what they embed (the advisor: one per distinct workload text).
    {2, "ALTER TABLE history_embeddings RENAME COLUMN job_id TO key;"},
};

Status CheckLength(const EmbedderIdentity& id, const StoredEmbedding& e) {
  if (id.dimension == 0) return Status::InvalidArgument("embeddings: embedder dimension 0");
  if (e.vector.size() != id.dimension) {
    return Status::InvalidArgument(
        fmt::format("embeddings: '{}': vector has {} components, embedder {} has dimension {}",
                    e.key, e.vector.size(), id.name, id.dimension));
  }
  return Status::Ok();
}

Status MismatchError(const EmbedderIdentity& want, const EmbedderIdentity& have) {
  return Status::FailedPrecondition(fmt::format(
      "embeddings: stored vectors come from embedder {} (dimension {}), not {} (dimension {}); "
      "run `schedmate history reindex`",
      have.name, have.dimension, want.name, want.dimension));
}

// Columns `first`.. of a row: embedder name, dimension, vector BLOB; checked against `identity`.
Result<std::vector<float>> ReadVector(Statement& st, int first, const EmbedderIdentity& identity,
                                      const std::string& key) {
  EmbedderIdentity row_id{st.ColumnText(first), static_cast<size_t>(st.ColumnInt(first + 1))};
  if (!(row_id == identity)) return MismatchError(identity, row_id);
  std::string bytes = st.ColumnText(first + 2);
  if (bytes.size() != identity.dimension * sizeof(float)) {
    return Status(StatusCode::kDataLoss,
                  fmt::format("embeddings: '{}': stored vector has {} bytes, want {}", key,
                              bytes.size(), identity.dimension * sizeof(float)));
  }
  std::vector<float> v(identity.dimension);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

const std::string kInsertVector =
    UpsertSql("history_embeddings", "key, embedder, dimension, vector", "key");

Status InsertVector(Statement& st, const EmbedderIdentity& identity, const StoredEmbedding& e) {
  st.BindText(1, e.key)
      .BindText(2, identity.name)
      .BindInt(3, static_cast<int64_t>(identity.dimension))
      .BindBlob(4, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(e.vector.data()),
                                            e.vector.size() * sizeof(float)));
  return st.Run();
}

// The row count of `table`.
Result<int64_t> CountRows(Db& db, std::string_view table) {
  SM_ASSIGN_OR_RETURN(Statement st, db.Prepare(fmt::format("SELECT COUNT(*) FROM {}", table)));
  SM_ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.ColumnInt(0) : int64_t{0};
}

// Records which embedder the stored vectors come from (the one row of history_embedder).
Status InsertEmbedderIdentity(Db& db, const EmbedderIdentity& identity) {
  SM_ASSIGN_OR_RETURN(Statement st, db.Prepare("INSERT INTO history_embedder(id, name, dimension) "
                                               "VALUES (1, ?1, ?2)"));
  st.BindText(1, identity.name).BindInt(2, static_cast<int64_t>(identity.dimension));
  return st.Run();
}

constexpr std::string_view kDeleteEmbeddings =
    "DELETE FROM history_embeddings; DELETE FROM history_embedder;";

constexpr const char* kJobColumns =
    "job_id, \"user\", vc, name, gpus_milli, cpus, nodes, submit_us, finish_us, duration_us,"
    " time_limit_us, state, model, dataset, batch_size, amp, iterations, fingerprint,"
    " metadata_json, source";

StoredJob ReadJob(const Statement& st) {
  StoredJob s;
  JobRecord& j = s.job;
  j.id = st.ColumnText(0);
  j.user = st.ColumnText(1);
  j.vc = st.ColumnText(2);
  j.name = st.ColumnText(3);
  j.gpus = GpuAmount::Milli(st.ColumnInt(4));
  j.cpus = static_cast<int32_t>(st.ColumnInt(5));
  j.nodes = static_cast<int32_t>(st.ColumnInt(6));
  j.submit = SimTime::FromMicros(st.ColumnInt(7));
  if (auto f = st.ColumnOptionalInt(8)) s.finish = SimTime::FromMicros(*f);
  j.duration = Duration::Micros(st.ColumnInt(9));
  if (auto t = st.ColumnOptionalInt(10)) j.time_limit = Duration::Micros(*t);
  j.state = ParseJobState(st.ColumnText(11));
  j.model = st.ColumnText(12);
  j.dataset = st.ColumnText(13);
  j.batch_size = static_cast<int32_t>(st.ColumnInt(14));
  j.amp = static_cast<int8_t>(st.ColumnInt(15));
  j.iterations = st.ColumnInt(16);
  s.fingerprint = st.ColumnText(17);
  s.metadata_json = st.ColumnText(18);
  s.source = st.ColumnText(19);
  return s;
}

}  // namespace

std::span<const Migration> SqlHistoryStore::Migrations() { return kHistoryMigrations; }
std::span<const Migration> SqlHistoryStore::EmbeddingMigrations() { return kEmbeddingMigrations; }

Result<std::unique_ptr<SqlHistoryStore>> SqlHistoryStore::Open(const std::string& location,
                                                               const SqliteOptions& options) {
  SM_ASSIGN_OR_RETURN(StoreLocation where, ParseStoreUrl(location));
  std::unique_ptr<Db> db;
  if (where.dialect == Dialect::kSqlite) {
    SM_ASSIGN_OR_RETURN(db, SqliteDb::Open(where.target, options));
  } else {
    SM_ASSIGN_OR_RETURN(db, OpenDatabase(location));
  }
  Db& ref = *db;
  std::unique_ptr<SqlHistoryStore> store(new SqlHistoryStore(std::move(db), ref));
  SM_RETURN_IF_ERROR(store->Init());
  return store;
}

Result<std::unique_ptr<SqlHistoryStore>> SqlHistoryStore::Attach(Db& db) {
  std::unique_ptr<SqlHistoryStore> store(new SqlHistoryStore(nullptr, db));
  SM_RETURN_IF_ERROR(store->Init());
  return store;
}

Status SqlHistoryStore::Init() {
  SM_RETURN_IF_ERROR(db_->Migrate("history", Migrations()));
  return db_->Migrate("embeddings", kEmbeddingMigrations);
}

Status SqlHistoryStore::PutOne(const StoredJob& s) {
  if (s.job.id.empty()) return Status::InvalidArgument("history store: job with an empty id");
  // Values no reader or scheduler produces (an overflowed conversion): refuse, never store them.
  if (s.job.gpus.milli() < 0 || s.job.duration < Duration::Zero() || s.job.cpus < 0 ||
      s.job.nodes < 0) {
    return Status::InvalidArgument(fmt::format(
        "history store: job {}: negative value (gpus_milli {}, duration_us {}, cpus {}, nodes {})",
        s.job.id, s.job.gpus.milli(), s.job.duration.micros(), s.job.cpus, s.job.nodes));
  }
  if (!put_job_) {
    SM_ASSIGN_OR_RETURN(Statement st,
                        db_->Prepare(UpsertSql("history_jobs", kJobColumns, "job_id")));
    put_job_.emplace(std::move(st));
  }
  const JobRecord& j = s.job;
  Statement& st = *put_job_;
  st.BindText(1, j.id).BindText(2, j.user).BindText(3, j.vc).BindText(4, j.name);
  st.BindInt(5, j.gpus.milli()).BindInt(6, j.cpus).BindInt(7, j.nodes);
  st.BindInt(8, j.submit.micros());
  st.BindOptionalInt(9, s.finish ? std::optional<int64_t>(s.finish->micros()) : std::nullopt);
  st.BindInt(10, j.duration.micros());
  st.BindOptionalInt(11,
                     j.time_limit ? std::optional<int64_t>(j.time_limit->micros()) : std::nullopt);
  st.BindText(12, JobStateName(j.state)).BindText(13, j.model).BindText(14, j.dataset);
  st.BindInt(15, j.batch_size).BindInt(16, j.amp).BindInt(17, j.iterations);
  st.BindText(18, s.fingerprint).BindText(19, s.metadata_json).BindText(20, s.source);
  return st.Run();
}

Status SqlHistoryStore::PutJob(const StoredJob& job) { return PutOne(job); }

Status SqlHistoryStore::PutJobs(std::span<const StoredJob> jobs) {
  SM_ASSIGN_OR_RETURN(auto tx, Transaction::Start(*db_));
  for (const StoredJob& j : jobs) SM_RETURN_IF_ERROR(PutOne(j));
  return tx->Commit();
}

Status SqlHistoryStore::RecordFinish(const std::string& job_id, SimTime finish, Duration duration,
                                     JobState state) {
  SM_ASSIGN_OR_RETURN(Statement st,
                      db_->Prepare("UPDATE history_jobs SET finish_us=?2, duration_us=?3, "
                                   "state=?4 WHERE job_id=?1"));
  st.BindText(1, job_id).BindInt(2, finish.micros()).BindInt(3, duration.micros());
  st.BindText(4, JobStateName(state));
  SM_RETURN_IF_ERROR(st.Run());
  if (db_->ChangedRows() == 0) return Status::NotFound("history store: no job '" + job_id + "'");
  return Status::Ok();
}

Result<std::optional<StoredJob>> SqlHistoryStore::FindJob(const std::string& job_id) {
  SM_ASSIGN_OR_RETURN(Statement st, db_->Prepare(std::string("SELECT ") + kJobColumns +
                                                 " FROM history_jobs WHERE job_id=?1"));
  st.BindText(1, job_id);
  SM_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::optional<StoredJob>();
  return std::optional<StoredJob>(ReadJob(st));
}

Result<std::vector<StoredJob>> SqlHistoryStore::ListJobs(const ListJobsOptions& o) {
  std::string order_key = o.finished_only ? "finish_us" : "submit_us";
  std::string where = " WHERE 1=1";
  if (o.finished_only) where += " AND finish_us IS NOT NULL";
  if (o.user) where += " AND \"user\"=?1";
  if (o.finished_before) where += " AND finish_us <= ?2";
  std::string sql = std::string("SELECT ") + kJobColumns + " FROM history_jobs" + where;
  if (o.limit >= 0) {
    sql = "SELECT * FROM (" + sql + " ORDER BY " + order_key +
          " DESC, job_id DESC LIMIT ?3) AS latest";
  }
  sql += " ORDER BY " + order_key + ", job_id";
  SM_ASSIGN_OR_RETURN(Statement st, db_->Prepare(sql));
  if (o.user) st.BindText(1, *o.user);
  if (o.finished_before) st.BindInt(2, o.finished_before->micros());
  if (o.limit >= 0) st.BindInt(3, o.limit);
  std::vector<StoredJob> out;
  while (true) {
    SM_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out.push_back(ReadJob(st));
  }
  return out;
}

Status SqlHistoryStore::PutPrediction(const StoredPrediction& p) {
  SM_ASSIGN_OR_RETURN(
      Statement st,
      db_->Prepare("INSERT INTO history_predictions(job_id, made_at_us, estimator, duration_us,"
                   " low_us, high_us, confidence, explanation, neighbours_json)"
                   " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9)"));
  st.BindText(1, p.job_id).BindInt(2, p.made_at.micros()).BindText(3, p.estimator);
  st.BindInt(4, p.duration.micros()).BindInt(5, p.low.micros()).BindInt(6, p.high.micros());
  st.BindDouble(7, p.confidence).BindText(8, p.explanation).BindText(9, p.neighbours_json);
  return st.Run();
}

Result<std::vector<StoredPrediction>> SqlHistoryStore::ListPredictions(const std::string& job_id) {
  SM_ASSIGN_OR_RETURN(
      Statement st,
      db_->Prepare("SELECT job_id, made_at_us, estimator, duration_us, low_us, high_us,"
                   " confidence, explanation, neighbours_json FROM history_predictions"
                   " WHERE job_id=?1 ORDER BY id"));
  st.BindText(1, job_id);
  std::vector<StoredPrediction> out;
  while (true) {
    SM_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    StoredPrediction p;
    p.job_id = st.ColumnText(0);
    p.made_at = SimTime::FromMicros(st.ColumnInt(1));
    p.estimator = st.ColumnText(2);
    p.duration = Duration::Micros(st.ColumnInt(3));
    p.low = Duration::Micros(st.ColumnInt(4));
    p.high = Duration::Micros(st.ColumnInt(5));
    p.confidence = st.ColumnDouble(6);
    p.explanation = st.ColumnText(7);
    p.neighbours_json = st.ColumnText(8);
    out.push_back(std::move(p));
  }
  return out;
}

Result<int64_t> SqlHistoryStore::CountJobs() { return CountRows(*db_, "history_jobs"); }

std::string DefaultHistoryPath() {
  if (const char* h = std::getenv("SCHEDMATE_HOME"); h != nullptr && *h != '\0') {
    return std::string(h) + "/history.db";
  }
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr && *home != '\0' ? home : ".") +
         "/.local/share/schedmate/history.db";
}

}  // namespace schedmate::store

namespace schedmate::store {

Result<std::optional<EmbedderIdentity>> SqlHistoryStore::StoredEmbedder() {
  SM_ASSIGN_OR_RETURN(Statement st,
                      db_->Prepare("SELECT name, dimension FROM history_embedder WHERE id = 1"));
  SM_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::optional<EmbedderIdentity>();
  return std::optional<EmbedderIdentity>(
      EmbedderIdentity{st.ColumnText(0), static_cast<size_t>(st.ColumnInt(1))});
}

Status SqlHistoryStore::ReplaceEmbeddings(const EmbedderIdentity& identity,
                                          std::span<const StoredEmbedding> embeddings) {
  if (identity.dimension == 0) return Status::InvalidArgument("embeddings: embedder dimension 0");
  for (const StoredEmbedding& e : embeddings) SM_RETURN_IF_ERROR(CheckLength(identity, e));
  SM_ASSIGN_OR_RETURN(auto tx, Transaction::Start(*db_));
  SM_RETURN_IF_ERROR(db_->Exec(kDeleteEmbeddings));
  SM_RETURN_IF_ERROR(InsertEmbedderIdentity(*db_, identity));
  SM_ASSIGN_OR_RETURN(Statement st, db_->Prepare(kInsertVector));
  for (const StoredEmbedding& e : embeddings) SM_RETURN_IF_ERROR(InsertVector(st, identity, e));
  return tx->Commit();
}

Status SqlHistoryStore::PutEmbedding(const EmbedderIdentity& identity,
                                     const StoredEmbedding& embedding) {
  SM_RETURN_IF_ERROR(CheckLength(identity, embedding));
  SM_ASSIGN_OR_RETURN(auto tx, Transaction::Start(*db_));
  SM_ASSIGN_OR_RETURN(std::optional<EmbedderIdentity> have, StoredEmbedder());
  if (have && !(*have == identity)) return MismatchError(identity, *have);
  if (!have) SM_RETURN_IF_ERROR(InsertEmbedderIdentity(*db_, identity));
  SM_ASSIGN_OR_RETURN(Statement st, db_->Prepare(kInsertVector));
  SM_RETURN_IF_ERROR(InsertVector(st, identity, embedding));
  return tx->Commit();
}

Result<std::optional<std::vector<float>>> SqlHistoryStore::GetEmbedding(
    const EmbedderIdentity& identity, const std::string& key) {
  SM_ASSIGN_OR_RETURN(std::optional<EmbedderIdentity> have, StoredEmbedder());
  if (have && !(*have == identity)) return MismatchError(identity, *have);
  SM_ASSIGN_OR_RETURN(Statement st, db_->Prepare("SELECT embedder, dimension, vector FROM "
                                                 "history_embeddings WHERE key = ?1"));
  st.BindText(1, key);
  SM_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::optional<std::vector<float>>();
  SM_ASSIGN_OR_RETURN(std::vector<float> v, ReadVector(st, 0, identity, key));
  return std::optional<std::vector<float>>(std::move(v));
}

Result<std::vector<StoredEmbedding>> SqlHistoryStore::ListEmbeddings(
    const EmbedderIdentity& identity) {
  std::vector<StoredEmbedding> out;
  SM_ASSIGN_OR_RETURN(std::optional<EmbedderIdentity> have, StoredEmbedder());
  if (!have) return out;
  if (!(*have == identity)) return MismatchError(identity, *have);
  SM_ASSIGN_OR_RETURN(Statement st, db_->Prepare("SELECT key, embedder, dimension, vector FROM "
                                                 "history_embeddings ORDER BY key"));
  while (true) {
    SM_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    StoredEmbedding e;
    e.key = st.ColumnText(0);
    SM_ASSIGN_OR_RETURN(e.vector, ReadVector(st, 1, identity, e.key));
    out.push_back(std::move(e));
  }
  return out;
}

Result<int64_t> SqlHistoryStore::CountEmbeddings() { return CountRows(*db_, "history_embeddings"); }

Status SqlHistoryStore::ClearEmbeddings() {
  SM_ASSIGN_OR_RETURN(auto tx, Transaction::Start(*db_));
  SM_RETURN_IF_ERROR(db_->Exec(kDeleteEmbeddings));
  return tx->Commit();
}

}  // namespace schedmate::store
