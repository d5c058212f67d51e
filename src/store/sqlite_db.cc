#include "store/sqlite_db.h"

#include <sqlite3.h>

#include <filesystem>
#include <memory>
#include <system_error>
#include <utility>

namespace schedmate::store {

// ---------------------------------------------------------------------------------------------
// Statement

namespace {

class SqliteStatement final : public StatementImpl {
 public:
  SqliteStatement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~SqliteStatement() override { sqlite3_finalize(stmt_); }

  void BindInt(int index, int64_t value) override { Keep(sqlite3_bind_int64(stmt_, index, value)); }
  void BindDouble(int index, double value) override {
    Keep(sqlite3_bind_double(stmt_, index, value));
  }
  void BindText(int index, std::string_view value) override {
    Keep(sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT,
                             SQLITE_UTF8));
  }
  void BindBlob(int index, std::span<const uint8_t> value) override {
    Keep(sqlite3_bind_blob64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT));
  }
  void BindNull(int index) override { Keep(sqlite3_bind_null(stmt_, index)); }

  Result<bool> Step() override {
    if (bind_rc_ != SQLITE_OK) {
      return Status::InvalidArgument(std::string("sqlite bind: ") + sqlite3_errstr(bind_rc_));
    }
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
  void Reset() override {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    bind_rc_ = SQLITE_OK;
  }

  int ColumnCount() const override { return sqlite3_column_count(stmt_); }
  bool IsNull(int col) const override { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  int64_t ColumnInt(int col) const override { return sqlite3_column_int64(stmt_, col); }
  double ColumnDouble(int col) const override { return sqlite3_column_double(stmt_, col); }
  std::string ColumnText(int col) const override {
    const void* p = sqlite3_column_type(stmt_, col) == SQLITE_BLOB
                        ? sqlite3_column_blob(stmt_, col)
                        : static_cast<const void*>(sqlite3_column_text(stmt_, col));
    if (p == nullptr) return {};
    return std::string(static_cast<const char*>(p),
                       static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
  }

 private:
  void Keep(int rc) {
    if (bind_rc_ == SQLITE_OK && rc != SQLITE_OK) bind_rc_ = rc;
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  int bind_rc_ = SQLITE_OK;  // first failing sqlite3_bind_* code, reported by Step()
};

}  // namespace

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
    s = db->Exec(kCreateSchemaVersions);
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
  return Statement(std::make_unique<SqliteStatement>(db_, stmt));
}

Status SqliteDb::Begin() { return Exec("BEGIN IMMEDIATE"); }
Status SqliteDb::Commit() { return Exec("COMMIT"); }
Status SqliteDb::Rollback() { return Exec("ROLLBACK"); }

int64_t SqliteDb::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }
int64_t SqliteDb::ChangedRows() const { return sqlite3_changes64(db_); }

}  // namespace schedmate::store
