#pragma once
// Db: the one database interface every component that keeps state uses (history store, service
// store, leadership), with two backends: SQLite (sqlite_db.h, the default, one file) and
// PostgreSQL (pg_db.h, a shared server for several companion instances).
//
// SQL is written once, in SQLite's dialect restricted to what PostgreSQL also understands once
// translated: `?`/`?N` parameters, INTEGER/REAL/BLOB columns, `INTEGER PRIMARY KEY
// [AUTOINCREMENT]` ids, `INSERT ... ON CONFLICT(...) DO UPDATE/NOTHING` upserts (UpsertSql below),
// `RETURNING id` instead of the last row id. The PostgreSQL backend translates it in one place,
// sql_dialect.h; `INSERT OR REPLACE/IGNORE` is refused there, so it cannot creep back in.
//
// Schema versioning: each component ("module") owns its tables and registers an ordered list of
// migrations with Migrate(module, migrations). The table `schema_versions(module, version)` records
// the highest applied version per module; Migrate applies only the newer ones, each in its own
// transaction together with the version bump, so a crash mid-migration leaves the previous version.
// Several processes migrating at once are serialised (SQLite's write lock, a PostgreSQL
// transaction-level advisory lock).
//
// Thread-safety: one Db (and its Statements) must be used by one thread at a time. Open one Db per
// thread or process for concurrency.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/result.h"
#include "core/status.h"

namespace schedmate::store {

// One step of a module's schema. Versions start at 1 and increase by 1 in the list.
struct Migration {
  int version = 0;
  std::string sql;  // one or more statements, run in one transaction
};

enum class Dialect { kSqlite, kPostgres };

// What a backend's prepared statement does; Statement below is the handle callers use.
class StatementImpl {
 public:
  virtual ~StatementImpl() = default;
  virtual void BindInt(int index, int64_t value) = 0;
  virtual void BindDouble(int index, double value) = 0;
  virtual void BindText(int index, std::string_view value) = 0;
  virtual void BindBlob(int index, std::span<const uint8_t> value) = 0;
  virtual void BindNull(int index) = 0;
  virtual Result<bool> Step() = 0;
  virtual void Reset() = 0;
  virtual int ColumnCount() const = 0;
  virtual bool IsNull(int col) const = 0;
  virtual int64_t ColumnInt(int col) const = 0;
  virtual double ColumnDouble(int col) const = 0;
  virtual std::string ColumnText(int col) const = 0;  // a BLOB's bytes for a BLOB column
};

// A prepared statement. Parameter indexes are 1-based (SQLite's convention); column indexes are
// 0-based. Move-only. Must not outlive its Db.
class Statement {
 public:
  Statement() = default;
  explicit Statement(std::unique_ptr<StatementImpl> impl) : impl_(std::move(impl)) {}

  Statement& BindInt(int index, int64_t value);
  Statement& BindDouble(int index, double value);
  Statement& BindText(int index, std::string_view value);
  Statement& BindBlob(int index, std::span<const uint8_t> value);
  Statement& BindNull(int index);
  // Binds value or NULL.
  Statement& BindOptionalInt(int index, const std::optional<int64_t>& value);
  Statement& BindOptionalDouble(int index, const std::optional<double>& value);

  // Advances: true when a row is available, false when done. Bind errors surface here.
  Result<bool> Step();
  // Steps to completion for statements that return no rows (INSERT/UPDATE/DDL), then Reset().
  Status Run();
  // Clears bindings and rewinds, ready for the next Bind...Step cycle.
  void Reset();

  int ColumnCount() const { return impl_->ColumnCount(); }
  bool IsNull(int col) const { return impl_->IsNull(col); }
  int64_t ColumnInt(int col) const { return impl_->ColumnInt(col); }
  double ColumnDouble(int col) const { return impl_->ColumnDouble(col); }
  std::string ColumnText(int col) const { return impl_->ColumnText(col); }  // "" for NULL
  std::optional<int64_t> ColumnOptionalInt(int col) const;
  std::optional<double> ColumnOptionalDouble(int col) const;

 private:
  std::unique_ptr<StatementImpl> impl_;
};

class Db {
 public:
  virtual ~Db() = default;
  Db() = default;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  virtual Dialect dialect() const = 0;
  // Where the data lives, for messages: a file path, or a URL without its password.
  virtual const std::string& path() const = 0;

  // Runs one or more SQL statements that return no rows.
  virtual Status Exec(std::string_view sql) = 0;
  // Compiles one statement. kInvalidArgument on a syntax error (SQLite: here; PostgreSQL: at the
  // first Step, when the server sees it).
  virtual Result<Statement> Prepare(std::string_view sql) = 0;

  // Plain transaction control (prefer Transaction below). SQLite's Begin takes the write lock
  // up front (BEGIN IMMEDIATE); PostgreSQL's is READ COMMITTED with row locks where written.
  virtual Status Begin() = 0;
  virtual Status Commit() = 0;
  virtual Status Rollback() = 0;

  // Rows changed by the last INSERT/UPDATE/DELETE run through this connection.
  virtual int64_t ChangedRows() const = 0;

  // Applies the migrations of `module` newer than its recorded version, in order.
  // kInvalidArgument if versions are not 1,2,3,...; kFailedPrecondition if the database records a
  // version newer than the newest migration given (a newer schedmate wrote it).
  Status Migrate(std::string_view module, std::span<const Migration> migrations);
  // The recorded schema version of `module`; 0 when it has none.
  Result<int> SchemaVersion(std::string_view module);

 protected:
  // Inside Migrate's transaction: keeps other processes from migrating at the same time.
  virtual Status LockSchema() = 0;
};

// RAII transaction: Begin() in Start(); rolls back in the destructor unless Commit()ed.
class Transaction {
 public:
  static Result<std::unique_ptr<Transaction>> Start(Db& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  Status Commit();

 private:
  explicit Transaction(Db& db) : db_(db) {}
  Db& db_;
  bool done_ = false;
};

// The table Migrate records versions in, in the SQL both dialects run; each backend creates it when
// it opens a database.
inline constexpr std::string_view kCreateSchemaVersions =
    "CREATE TABLE IF NOT EXISTS schema_versions ("
    " module TEXT PRIMARY KEY, version INTEGER NOT NULL, applied_at TEXT NOT NULL)";

// "INSERT INTO table(c1, ..., cn) VALUES(?1, ..., ?n) ON CONFLICT(keys) DO UPDATE SET c =
// excluded.c
// ..." for every column not in `keys` (both comma-separated lists): SQLite's INSERT OR REPLACE in
// a form both dialects run, except that the row keeps its id.
std::string UpsertSql(std::string_view table, std::string_view columns, std::string_view keys);

// Where the store lives (`store.url`): "sqlite:///abs/path", "sqlite://rel/path" or a plain path
// for SQLite; "postgresql://..." or "postgres://..." (libpq's URI) for PostgreSQL.
struct StoreLocation {
  Dialect dialect = Dialect::kSqlite;
  std::string target;  // the SQLite path, or the libpq connection URI
};
// kInvalidArgument naming the URL for another scheme or an empty path.
Result<StoreLocation> ParseStoreUrl(std::string_view url);
// A URL with its password replaced by "***" (for messages and /healthz).
std::string RedactUrl(std::string_view url);

// Opens the database at `url` (ParseStoreUrl), creating an SQLite file when missing.
Result<std::unique_ptr<Db>> OpenDatabase(std::string_view url);

}  // namespace schedmate::store
