#pragma once
// SqliteDb: a thin, Status-returning layer over one SQLite connection, shared by every component
// that keeps state on disk (history store, Slurm service, ...).
//
// Durability: Open() turns on WAL journaling with synchronous=NORMAL, so a committed transaction
// survives a crash or kill -9 of the process (it may be lost only on power failure / OS crash
// before the next checkpoint, the documented WAL+NORMAL trade-off). busy_timeout lets several
// processes share one file.
//
// Schema versioning: each component ("module") owns its tables and registers an ordered list of
// migrations with Migrate(module, migrations). The table `schema_versions(module, version)` records
// the highest applied version per module; Migrate applies only the newer ones, each in its own
// transaction together with the version bump, so a crash mid-migration leaves the previous version.
//
// Thread-safety: one SqliteDb (and its Statements) must be used by one thread at a time. Open one
// SqliteDb per thread or process for concurrency; WAL lets readers run beside one writer.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/result.h"
#include "core/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace schedmate::store {

// One step of a module's schema. Versions start at 1 and increase by 1 in the list.
struct Migration {
  int version = 0;
  std::string sql;  // one or more statements, run in one transaction
};

// A prepared statement. Parameter indexes are 1-based (SQLite's convention); column indexes are
// 0-based. Move-only; finalised by the destructor. Must not outlive its SqliteDb.
class Statement {
 public:
  Statement() = default;
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

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

  int ColumnCount() const;
  bool IsNull(int col) const;
  int64_t ColumnInt(int col) const;
  double ColumnDouble(int col) const;
  std::string ColumnText(int col) const;  // "" for NULL
  std::optional<int64_t> ColumnOptionalInt(int col) const;
  std::optional<double> ColumnOptionalDouble(int col) const;

 private:
  friend class SqliteDb;
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Status BindError() const;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  int bind_rc_ = 0;  // first failing sqlite3_bind_* code, reported by Step()
};

struct SqliteOptions {
  int busy_timeout_ms = 5000;
  bool create_if_missing = true;
  bool read_only = false;
};

class SqliteDb {
 public:
  // Opens (creates) the database at `path` (":memory:" for an in-memory database), sets WAL,
  // synchronous=NORMAL, foreign_keys=ON and busy_timeout, and creates `schema_versions`.
  // Errors name the path. Parent directories are created when create_if_missing.
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path,
                                                const SqliteOptions& options = {});
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  const std::string& path() const { return path_; }

  // Runs one or more SQL statements that return no rows.
  Status Exec(std::string_view sql);
  // Compiles one statement. kInvalidArgument with SQLite's message on a syntax error.
  Result<Statement> Prepare(std::string_view sql);

  // Plain transaction control (prefer Transaction below). Begin uses BEGIN IMMEDIATE so the
  // write lock is taken up front (no upgrade deadlocks between processes).
  Status Begin();
  Status Commit();
  Status Rollback();

  // Applies the migrations of `module` newer than its recorded version, in order.
  // kInvalidArgument if versions are not 1,2,3,...; kFailedPrecondition if the database records a
  // version newer than the newest migration given (a newer schedmate wrote it).
  Status Migrate(std::string_view module, std::span<const Migration> migrations);
  // The recorded schema version of `module`; 0 when it has none.
  Result<int> SchemaVersion(std::string_view module);

  int64_t LastInsertRowId() const;
  int64_t ChangedRows() const;
  // Raw handle for features this wrapper does not cover. Owned by SqliteDb.
  sqlite3* handle() { return db_; }

 private:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  Status Error(std::string_view what) const;
  sqlite3* db_ = nullptr;
  std::string path_;
};

// RAII transaction: BEGIN IMMEDIATE in Start(); rolls back in the destructor unless Commit()ed.
class Transaction {
 public:
  static Result<std::unique_ptr<Transaction>> Start(SqliteDb& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  Status Commit();

 private:
  explicit Transaction(SqliteDb& db) : db_(db) {}
  SqliteDb& db_;
  bool done_ = false;
};

}  // namespace schedmate::store
