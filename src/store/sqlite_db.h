#pragma once
// SqliteDb: the SQLite backend of Db (db.h), the default store: one file, one writer at a time.
//
// Durability: Open() turns on WAL journaling with synchronous=NORMAL, so a committed transaction
// survives a crash or kill -9 of the process (it may be lost only on power failure / OS crash
// before the next checkpoint, the documented WAL+NORMAL trade-off). busy_timeout lets several
// processes share one file; Begin() is BEGIN IMMEDIATE, so the write lock is taken up front (no
// upgrade deadlocks between processes).
//
// Thread-safety: one SqliteDb (and its Statements) must be used by one thread at a time. Open one
// SqliteDb per thread or process for concurrency; WAL lets readers run beside one writer.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "store/db.h"

struct sqlite3;

namespace schedmate::store {

struct SqliteOptions {
  int busy_timeout_ms = 5000;
  bool create_if_missing = true;
  bool read_only = false;
};

class SqliteDb final : public Db {
 public:
  // Opens (creates) the database at `path` (":memory:" for an in-memory database), sets WAL,
  // synchronous=NORMAL, foreign_keys=ON and busy_timeout, and creates `schema_versions`.
  // Errors name the path. Parent directories are created when create_if_missing.
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path,
                                                const SqliteOptions& options = {});
  ~SqliteDb() override;

  Dialect dialect() const override { return Dialect::kSqlite; }
  const std::string& path() const override { return path_; }
  Status Exec(std::string_view sql) override;
  Result<Statement> Prepare(std::string_view sql) override;
  Status Begin() override;
  Status Commit() override;
  Status Rollback() override;
  int64_t ChangedRows() const override;

  int64_t LastInsertRowId() const;
  // Raw handle for features this wrapper does not cover. Owned by SqliteDb.
  sqlite3* handle() { return db_; }

 protected:
  Status LockSchema() override { return Status::Ok(); }  // BEGIN IMMEDIATE holds the lock

 private:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  Status Error(std::string_view what) const;
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace schedmate::store
