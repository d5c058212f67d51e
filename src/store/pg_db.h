#pragma once
// PgDb: the PostgreSQL backend of Db (db.h), for several companion instances sharing one store.
// One libpq connection (a server session); SQL is translated by sql_dialect.h. Parameters are sent
// typed (int8, float8, text, bytea) in text format; rows are read whole per statement.
//
// Errors: SQLSTATE class 23 (constraint) -> kAlreadyExists, 40 (serialization, deadlock) and
// 08 / a lost connection -> kUnavailable, 42 (syntax, unknown table) -> kInvalidArgument, the rest
// kInternal; messages name the URL (password redacted) and the statement.
//
// A lost connection is reopened before the next statement outside a transaction (inside one, every
// statement fails kUnavailable until Rollback). Sessions that hold session state (the leader's
// advisory lock) open with auto_reconnect off and call Reconnect() themselves.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "store/db.h"

struct pg_conn;

namespace schedmate::store {

class PgDb final : public Db {
 public:
  // Connects to the libpq URI `url` (with TCP keepalives on) and creates `schema_versions`.
  // kUnavailable naming the URL when the server cannot be reached.
  static Result<std::unique_ptr<PgDb>> Open(const std::string& url, bool auto_reconnect = true);
  ~PgDb() override;

  Dialect dialect() const override { return Dialect::kPostgres; }
  const std::string& path() const override { return redacted_; }
  Status Exec(std::string_view sql) override;
  Result<Statement> Prepare(std::string_view sql) override;
  Status Begin() override;
  Status Commit() override;
  Status Rollback() override;
  int64_t ChangedRows() const override { return changed_; }

  // True while the session is up (as libpq last saw it).
  bool Connected() const;
  // Drops and reopens the session (a new server backend: session locks are gone).
  Status Reconnect();
  // The server process id of this session (pg_backend_pid()).
  int BackendPid() const;

  // For PgStatement: the connection, the last statement's changed-row count, error mapping.
  pg_conn* conn() { return conn_; }
  void set_changed(int64_t n) { changed_ = n; }
  // Before a statement: reopens a lost session when allowed (see above).
  Status EnsureConnected();
  Status ErrorFrom(const void* result, std::string_view what) const;

 protected:
  Status LockSchema() override;

 private:
  PgDb(pg_conn* conn, std::string url, std::string redacted)
      : conn_(conn), url_(std::move(url)), redacted_(std::move(redacted)) {}
  static Result<pg_conn*> Connect(const std::string& url, const std::string& redacted);
  pg_conn* conn_ = nullptr;
  std::string url_;
  std::string redacted_;
  int64_t changed_ = 0;
  bool auto_reconnect_ = true;
  bool in_transaction_ = false;
};

}  // namespace schedmate::store
