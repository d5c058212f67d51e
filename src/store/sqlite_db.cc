#include "store/sqlite_db.h"

#include <sqlite3.h>

#include <filesystem>
#include <system_error>
#include <utility>

namespace schedmate::store {

// ---------------------------------------------------------------------------------------------
// Statement

Statement::~Statement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

Statement::Statement(Statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      stmt_(std::exchange(other.stmt_, nullptr)),
      bind_rc_(std::exchange(other.bind_rc_, 0)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    if (stmt_ != nullptr) sqlite3_finalize(stmt_);
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    bind_rc_ = std::exchange(other.bind_rc_, 0);
  }
  return *this;
}

namespace {
void Keep(int& first, int rc) {
  if (first == SQLITE_OK && rc != SQLITE_OK) first = rc;
}
}  // namespace

Statement& Statement::BindInt(int index, int64_t value) {
  Keep(bind_rc_, sqlite3_bind_int64(stmt_, index, value));
  return *this;
}
Statement& Statement::BindDouble(int index, double value) {
  Keep(bind_rc_, sqlite3_bind_double(stmt_, index, value));
  return *this;
}
Statement& Statement::BindText(int index, std::string_view value) {
  Keep(bind_rc_, sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT,
                                     SQLITE_UTF8));
  return *this;
}
Statement& Statement::BindBlob(int index, std::span<const uint8_t> value) {
  Keep(bind_rc_, sqlite3_bind_blob64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT));
  return *this;
}
Statement& Statement::BindNull(int index) {
  Keep(bind_rc_, sqlite3_bind_null(stmt_, index));
  return *this;
}
Statement& Statement::BindOptionalInt(int index, const std::optional<int64_t>& value) {
  return value ? BindInt(index, *value) : BindNull(index);
}
Statement& Statement::BindOptionalDouble(int index, const std::optional<double>& value) {
  return value ? BindDouble(index, *value) : BindNull(index);
}

Status Statement::BindError() const {
  return Status::InvalidArgument(std::string("sqlite bind: ") + sqlite3_errstr(bind_rc_));
}

Result<bool> Statement::Step() {
  if (stmt_ == nullptr) return Status::FailedPrecondition("sqlite: step on an empty statement");
  if (bind_rc_ != SQLITE_OK) return BindError();
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  std::string msg =
      std::string("sqlite: ") + sqlite3_errmsg(db_) + " (in: " + sqlite3_sql(stmt_) + ")";
  if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) return Status::Unavailable(msg);
  if (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB) return Status::DataLoss(msg);
  if (rc == SQLITE_CONSTRAINT) return Status::AlreadyExists(msg);
  return Status::Internal(msg);
}

Status Statement::Run() {
  while (true) {
    Result<bool> r = Step();
    if (!r.ok()) {
      Reset();
      return r.status();
    }
    if (!*r) break;
  }
  Reset();
  return Status::Ok();
}

void Statement::Reset() {
  if (stmt_ == nullptr) return;
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_rc_ = SQLITE_OK;
}

int Statement::ColumnCount() const { return sqlite3_column_count(stmt_); }
bool Statement::IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
int64_t Statement::ColumnInt(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::ColumnDouble(int col) const { return sqlite3_column_double(stmt_, col); }
std::string Statement::ColumnText(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (p == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(p),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}
std::optional<int64_t> Statement::ColumnOptionalInt(int col) const {
  if (IsNull(col)) return std::nullopt;
  return ColumnInt(col);
}
std::optional<double> Statement::ColumnOptionalDouble(int col) const {
  if (IsNull(col)) return std::nullopt;
  return ColumnDouble(col);
}

// ---------------------------------------------------------------------------------------------
// SqliteDb

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path,
                                                 const SqliteOptions& options) {
  bool memory = path == ":memory:" || path.empty();
  if (!memory && options.create_if_missing && !options.read_only) {
    std::error_code ec;
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) {
      return Status::InvalidArgument("cannot create directory " + parent.string() + " for " + path +
                                     ": " + ec.message());
    }
  }
  int flags = SQLITE_OPEN_NOMUTEX;
  if (options.read_only) {
    flags |= SQLITE_OPEN_READONLY;
  } else {
    flags |= SQLITE_OPEN_READWRITE;
    if (options.create_if_missing) flags |= SQLITE_OPEN_CREATE;
  }
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(memory ? ":memory:" : path.c_str(), &raw, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    if (raw != nullptr) sqlite3_close(raw);
    if (rc == SQLITE_CANTOPEN) return Status::NotFound("cannot open database " + path + ": " + msg);
    return Status::Unavailable("cannot open database " + path + ": " + msg);
  }
  std::unique_ptr<SqliteDb> db(new SqliteDb(raw, memory ? ":memory:" : path));
  sqlite3_extended_result_codes(raw, 0);
  sqlite3_busy_timeout(raw, options.busy_timeout_ms);
  // journal_mode returns a row, so it cannot go through Exec's no-row contract blindly; Exec
  // ignores rows anyway via sqlite3_exec.
  std::string pragmas = "PRAGMA foreign_keys=ON;";
  if (!memory && !options.read_only) pragmas += "PRAGMA journal_mode=WAL;";
  pragmas += "PRAGMA synchronous=NORMAL;";
  Status s = db->Exec(pragmas);
  if (!s.ok()) {
    if (s.code() == StatusCode::kDataLoss || s.code() == StatusCode::kInternal) {
      return Status::DataLoss(path + " is not a usable SQLite database: " + s.message());
    }
    return s.WithContext("opening " + path);
  }
  if (!options.read_only) {
    s = db->Exec(
        "CREATE TABLE IF NOT EXISTS schema_versions ("
        " module TEXT PRIMARY KEY, version INTEGER NOT NULL, applied_at TEXT NOT NULL)");
    if (!s.ok()) return s.WithContext("opening " + path);
  }
  return db;
}

SqliteDb::~SqliteDb() {
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

Status SqliteDb::Error(std::string_view what) const {
  int rc = sqlite3_errcode(db_);
  std::string msg = std::string(what) + ": " + sqlite3_errmsg(db_) + " [" + path_ + "]";
  if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) return Status::Unavailable(msg);
  if (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB) return Status::DataLoss(msg);
  if (rc == SQLITE_ERROR) return Status::InvalidArgument(msg);
  if (rc == SQLITE_CONSTRAINT) return Status::AlreadyExists(msg);
  return Status::Internal(msg);
}

Status SqliteDb::Exec(std::string_view sql) {
  std::string text(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err);
  if (err != nullptr) sqlite3_free(err);
  if (rc != SQLITE_OK) return Error("sqlite exec");
  return Status::Ok();
}

Result<Statement> SqliteDb::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    Status s = Error("sqlite prepare \"" + std::string(sql.substr(0, 80)) + "\"");
    if (stmt != nullptr) sqlite3_finalize(stmt);
    return s;
  }
  if (stmt == nullptr) return Status::InvalidArgument("sqlite prepare: empty statement");
  return Statement(db_, stmt);
}

Status SqliteDb::Begin() { return Exec("BEGIN IMMEDIATE"); }
Status SqliteDb::Commit() { return Exec("COMMIT"); }
Status SqliteDb::Rollback() { return Exec("ROLLBACK"); }

int64_t SqliteDb::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }
int64_t SqliteDb::ChangedRows() const { return sqlite3_changes64(db_); }

Result<int> SqliteDb::SchemaVersion(std::string_view module) {
  SM_ASSIGN_OR_RETURN(Statement st,
                      Prepare("SELECT version FROM schema_versions WHERE module = ?1"));
  st.BindText(1, module);
  SM_ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? static_cast<int>(st.ColumnInt(0)) : 0;
}

Status SqliteDb::Migrate(std::string_view module, std::span<const Migration> migrations) {
  if (module.empty()) return Status::InvalidArgument("migration module name is empty");
  for (size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version != static_cast<int>(i) + 1) {
      return Status::InvalidArgument("migrations of module '" + std::string(module) +
                                     "' must be numbered 1,2,3...; entry " + std::to_string(i) +
                                     " has version " + std::to_string(migrations[i].version));
    }
  }
  SM_ASSIGN_OR_RETURN(int current, SchemaVersion(module));
  int newest = static_cast<int>(migrations.size());
  if (current > newest) {
    return Status::FailedPrecondition(
        path_ + ": module '" + std::string(module) + "' is at schema version " +
        std::to_string(current) + ", newer than this build knows (" + std::to_string(newest) + ")");
  }
  for (int v = current + 1; v <= newest; ++v) {
    SM_ASSIGN_OR_RETURN(auto tx, Transaction::Start(*this));
    // Re-read inside the write lock: another process may have migrated meanwhile.
    SM_ASSIGN_OR_RETURN(int now, SchemaVersion(module));
    if (now >= v) continue;  // tx rolls back (nothing written)
    Status s = Exec(migrations[v - 1].sql);
    if (!s.ok()) {
      return s.WithContext("migrating '" + std::string(module) + "' to version " +
                           std::to_string(v));
    }
    SM_ASSIGN_OR_RETURN(
        Statement st, Prepare("INSERT INTO schema_versions(module, version, applied_at) "
                              "VALUES(?1, ?2, datetime('now')) ON CONFLICT(module) DO UPDATE "
                              "SET version = excluded.version, applied_at = excluded.applied_at"));
    st.BindText(1, module).BindInt(2, v);
    SM_RETURN_IF_ERROR(st.Run());
    SM_RETURN_IF_ERROR(tx->Commit());
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Transaction

Result<std::unique_ptr<Transaction>> Transaction::Start(SqliteDb& db) {
  SM_RETURN_IF_ERROR(db.Begin());
  return std::unique_ptr<Transaction>(new Transaction(db));
}

Transaction::~Transaction() {
  if (!done_) (void)db_.Rollback();
}

Status Transaction::Commit() {
  if (done_) return Status::FailedPrecondition("transaction already finished");
  Status s = db_.Commit();
  if (s.ok()) done_ = true;
  return s;
}

}  // namespace schedmate::store
