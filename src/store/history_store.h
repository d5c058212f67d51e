#pragma once
// HistoryStore: the durable record of jobs schedmate has seen: their submit-time description
// (user, resources, workload labels, extracted metadata and fingerprint), when they finished and
// how long they ran, and every duration prediction made for them with its explanation.
// The advisor's estimator learns from finished jobs; the service and API read predictions back.
//
// SqlHistoryStore is the implementation over a Db (module "history", see db.h): the same SQL on
// SQLite (default) and PostgreSQL. Other components may register their own tables in the same
// database through db().Migrate("<module>", ...).
//
// Thread-safety: like SqliteDb, one store object per thread. Several processes may share a file.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/job.h"
#include "core/result.h"
#include "core/sim_time.h"
#include "core/status.h"
#include "store/sqlite_db.h"

namespace schedmate::store {

// One job as stored. `job` carries the submit-time fields plus, once finished, `duration` and
// `state`; `finish` is set iff the job has finished.
struct StoredJob {
  JobRecord job;
  std::optional<SimTime> finish;
  std::string fingerprint;    // the advisor's text fingerprint ("" when none)
  std::string metadata_json;  // extracted workload metadata as JSON ("" when none)
  std::string source;         // where the job came from: a trace path, "slurm", "advise"
};

// One duration prediction for a job.
struct StoredPrediction {
  std::string job_id;
  SimTime made_at;        // when the prediction was made
  std::string estimator;  // estimator name, e.g. "advisor"
  Duration duration, low, high;
  double confidence = 0;
  std::string explanation;      // for people
  std::string neighbours_json;  // the evidence (past jobs leaned on) as JSON, "" when none
};

struct ListJobsOptions {
  bool finished_only = true;
  std::optional<std::string> user;         // only this user's jobs
  std::optional<SimTime> finished_before;  // finish <= this
  int64_t limit = -1;                      // -1: no limit; otherwise the most recent `limit`
};

class HistoryStore {
 public:
  virtual ~HistoryStore() = default;
  // Inserts or replaces the job with this id. kInvalidArgument for an empty id or negative GPUs,
  // duration, CPUs or nodes.
  virtual Status PutJob(const StoredJob& job) = 0;
  // Same as PutJob for each, all in one transaction (all or nothing).
  virtual Status PutJobs(std::span<const StoredJob> jobs) = 0;
  // Marks a stored job finished. kNotFound if the id is unknown.
  virtual Status RecordFinish(const std::string& job_id, SimTime finish, Duration duration,
                              JobState state) = 0;
  virtual Result<std::optional<StoredJob>> FindJob(const std::string& job_id) = 0;
  // Jobs in (finish or submit time, job_id) order; with a limit, the latest ones, still ascending.
  virtual Result<std::vector<StoredJob>> ListJobs(const ListJobsOptions& options) = 0;
  virtual Status PutPrediction(const StoredPrediction& prediction) = 0;
  // Predictions for one job, oldest first.
  virtual Result<std::vector<StoredPrediction>> ListPredictions(const std::string& job_id) = 0;
  virtual Result<int64_t> CountJobs() = 0;
};

// A stored text embedding (float32 components), keyed by what it embeds. The advisor keys them by
// workload text: jobs of one workload share one vector, so the store grows with the number of
// distinct workloads, not jobs.
struct StoredEmbedding {
  std::string key;
  std::vector<float> vector;
};

// Which embedder produced the stored vectors; vectors of another identity are not comparable.
struct EmbedderIdentity {
  std::string name;  // e.g. "hashing" or "server:<model>"
  size_t dimension = 0;
  bool operator==(const EmbedderIdentity&) const = default;
};

class SqlHistoryStore final : public HistoryStore {
 public:
  // Opens (creating an SQLite file) the store at `location` — a path or a store URL (db.h:
  // sqlite:///path, postgresql://...) — and applies the "history" migrations. `options` apply to
  // SQLite only.
  static Result<std::unique_ptr<SqlHistoryStore>> Open(const std::string& location,
                                                       const SqliteOptions& options = {});
  // Uses an already open database (not owned; it must outlive the store).
  static Result<std::unique_ptr<SqlHistoryStore>> Attach(Db& db);

  // The connection, so other modules can add tables to the same database.
  Db& db() { return *db_; }

  Status PutJob(const StoredJob& job) override;
  Status PutJobs(std::span<const StoredJob> jobs) override;
  Status RecordFinish(const std::string& job_id, SimTime finish, Duration duration,
                      JobState state) override;
  Result<std::optional<StoredJob>> FindJob(const std::string& job_id) override;
  Result<std::vector<StoredJob>> ListJobs(const ListJobsOptions& options) override;
  Status PutPrediction(const StoredPrediction& prediction) override;
  Result<std::vector<StoredPrediction>> ListPredictions(const std::string& job_id) override;
  Result<int64_t> CountJobs() override;

  // Embeddings (module "embeddings": one vector per key plus the embedder identity that made
  // them; vectors are stored as native-endian float32 BLOBs).
  // The recorded identity; nullopt when none is stored.
  Result<std::optional<EmbedderIdentity>> StoredEmbedder();
  // Replaces ALL stored vectors and the identity in one transaction. kInvalidArgument (store
  // unchanged) when a vector's length differs from identity.dimension or the dimension is 0.
  Status ReplaceEmbeddings(const EmbedderIdentity& identity,
                           std::span<const StoredEmbedding> embeddings);
  // Adds or replaces one vector. kFailedPrecondition when `identity` differs from the recorded
  // one (recorded when none is); kInvalidArgument on a wrong length.
  Status PutEmbedding(const EmbedderIdentity& identity, const StoredEmbedding& embedding);
  // kFailedPrecondition when `identity` differs from the recorded one; nullopt when absent.
  Result<std::optional<std::vector<float>>> GetEmbedding(const EmbedderIdentity& identity,
                                                         const std::string& key);
  // Every stored vector, in key order. kFailedPrecondition when `identity` differs from the
  // recorded one; empty when none is recorded.
  Result<std::vector<StoredEmbedding>> ListEmbeddings(const EmbedderIdentity& identity);
  Result<int64_t> CountEmbeddings();
  // Removes every vector and the identity.
  Status ClearEmbeddings();

  // The history and embeddings modules' migrations (exposed for tests and tooling).
  static std::span<const Migration> Migrations();
  static std::span<const Migration> EmbeddingMigrations();

 private:
  SqlHistoryStore(std::unique_ptr<Db> owned, Db& db) : owned_(std::move(owned)), db_(&db) {}
  Status Init();
  Status PutOne(const StoredJob& job);
  std::unique_ptr<Db> owned_;  // may be null (Attach)
  Db* db_;
  std::optional<Statement> put_job_;  // cached prepared statement
};

// The name it had while SQLite was the only backend.
using SqliteHistoryStore = SqlHistoryStore;

// The default history database: $SCHEDMATE_HOME/history.db when SCHEDMATE_HOME is set and
// non-empty, else ~/.local/share/schedmate/history.db.
std::string DefaultHistoryPath();

}  // namespace schedmate::store
