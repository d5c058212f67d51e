#include "store/pg_db.h"

#include <fmt/format.h>
#include <libpq-fe.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "store/sql_dialect.h"

namespace schedmate::store {
namespace {

// Type oids of the parameters we send (pg_type.h).
constexpr Oid kInt8 = 20, kText = 25, kFloat8 = 701, kBytea = 17;

std::string HexBytes(std::span<const uint8_t> bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out = "\\x";
  out.reserve(2 + bytes.size() * 2);
  for (uint8_t b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 0;
}

std::string UnhexBytes(std::string_view text) {  // bytea_output = hex: "\x0a1b..."
  if (text.size() < 2 || text[0] != '\\' || text[1] != 'x') return std::string(text);
  std::string out;
  out.reserve((text.size() - 2) / 2);
  for (size_t i = 2; i + 1 < text.size(); i += 2) {
    out += static_cast<char>(HexValue(text[i]) * 16 + HexValue(text[i + 1]));
  }
  return out;
}

class PgStatement final : public StatementImpl {
 public:
  PgStatement(PgDb& db, PostgresSql sql) : db_(db), sql_(std::move(sql)) {}
  ~PgStatement() override { Clear(); }

  void BindInt(int index, int64_t value) override { Set(index, kInt8, std::to_string(value)); }
  void BindDouble(int index, double value) override {
    std::string text = std::isnan(value)   ? "NaN"
                       : std::isinf(value) ? (value > 0 ? "Infinity" : "-Infinity")
                                           : fmt::format("{:.17g}", value);
    Set(index, kFloat8, std::move(text));
  }
  void BindText(int index, std::string_view value) override {
    Set(index, kText, std::string(value));
  }
  void BindBlob(int index, std::span<const uint8_t> value) override {
    Set(index, kBytea, HexBytes(value));
  }
  void BindNull(int index) override { Set(index, 0, std::nullopt); }

  Result<bool> Step() override {
    if (bind_error_) {
      return Status::InvalidArgument(
          fmt::format("postgres bind: parameter index {} out of range", *bind_error_));
    }
    if (result_ == nullptr) {
      SM_RETURN_IF_ERROR(db_.EnsureConnected());
      SM_RETURN_IF_ERROR(Execute());
      row_ = -1;
    }
    ++row_;
    return row_ < PQntuples(result_);
  }
  void Reset() override {
    Clear();
    params_.clear();
    bind_error_.reset();
  }

  int ColumnCount() const override { return result_ ? PQnfields(result_) : 0; }
  bool IsNull(int col) const override { return PQgetisnull(result_, row_, col) != 0; }
  int64_t ColumnInt(int col) const override {
    return std::strtoll(PQgetvalue(result_, row_, col), nullptr, 10);
  }
  double ColumnDouble(int col) const override {
    return std::strtod(PQgetvalue(result_, row_, col), nullptr);
  }
  std::string ColumnText(int col) const override {
    if (IsNull(col)) return {};
    std::string_view v(PQgetvalue(result_, row_, col),
                       static_cast<size_t>(PQgetlength(result_, row_, col)));
    if (PQftype(result_, col) == kBytea) return UnhexBytes(v);
    return std::string(v);
  }

 private:
  struct Param {
    Oid type = kText;
    std::optional<std::string> value;
  };
  void Set(int index, Oid type, std::optional<std::string> value) {
    if (index < 1 || index > 32767) {
      if (!bind_error_) bind_error_ = index;
      return;
    }
    if (params_.size() < static_cast<size_t>(index)) params_.resize(index);
    params_[index - 1] = {type, std::move(value)};
  }
  void Clear() {
    if (result_ != nullptr) PQclear(result_);
    result_ = nullptr;
  }
  Status Execute() {
    // Unbound parameters are NULL text; parameters bound but never used are sent typed, which
    // PostgreSQL accepts.
    size_t n = std::max(params_.size(), static_cast<size_t>(sql_.params));
    params_.resize(n);
    std::vector<Oid> types(n);
    std::vector<const char*> values(n);
    for (size_t i = 0; i < n; ++i) {
      types[i] = params_[i].type;
      values[i] = params_[i].value ? params_[i].value->c_str() : nullptr;
    }
    result_ = PQexecParams(db_.conn(), sql_.text.c_str(), static_cast<int>(n), types.data(),
                           values.data(), nullptr, nullptr, 0);
    ExecStatusType st = result_ ? PQresultStatus(result_) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
      const char* changed = PQcmdTuples(result_);
      db_.set_changed(changed && *changed ? std::strtoll(changed, nullptr, 10) : 0);
      return Status::Ok();
    }
    Status s = db_.ErrorFrom(result_, "postgres: " + sql_.text.substr(0, 200));
    Clear();
    return s;
  }

  PgDb& db_;
  PostgresSql sql_;
  std::vector<Param> params_;
  std::optional<int> bind_error_;
  PGresult* result_ = nullptr;
  int row_ = -1;
};

void IgnoreNotice(void*, const char*) {}

}  // namespace

Result<pg_conn*> PgDb::Connect(const std::string& url, const std::string& redacted) {
  // Keepalives: a leader whose host vanished loses its session (and its lock) in ~25 s.
  const char* keys[] = {
      "dbname",          "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count",
      "connect_timeout", nullptr};
  const char* values[] = {url.c_str(), "1", "10", "5", "3", "10", nullptr};
  PGconn* conn = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (conn == nullptr) return Status::Unavailable("postgres: out of memory connecting");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string msg = PQerrorMessage(conn);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    PQfinish(conn);
    return Status::Unavailable(fmt::format("cannot connect to {}: {}", redacted, msg));
  }
  PQsetNoticeProcessor(conn, IgnoreNotice, nullptr);
  return conn;
}

Result<std::unique_ptr<PgDb>> PgDb::Open(const std::string& url, bool auto_reconnect) {
  std::string redacted = RedactUrl(url);
  SM_ASSIGN_OR_RETURN(pg_conn * conn, Connect(url, redacted));
  std::unique_ptr<PgDb> db(new PgDb(conn, url, redacted));
  db->auto_reconnect_ = auto_reconnect;
  // Two processes creating the table at once would collide in the catalog: serialise.
  Status s = db->Exec(
      fmt::format("SELECT pg_advisory_lock(7362818); {}; SELECT pg_advisory_unlock(7362818);",
                  kCreateSchemaVersions));
  if (!s.ok()) return s.WithContext("opening " + redacted);
  return db;
}

PgDb::~PgDb() {
  if (conn_ != nullptr) PQfinish(conn_);
}

bool PgDb::Connected() const { return conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK; }

Status PgDb::EnsureConnected() {
  if (Connected()) return Status::Ok();
  if (in_transaction_ || !auto_reconnect_) {
    return Status::Unavailable("postgres: the session to " + redacted_ + " was lost" +
                               (in_transaction_ ? " inside a transaction" : ""));
  }
  return Reconnect();
}

Status PgDb::Reconnect() {
  if (conn_ != nullptr) PQfinish(conn_);
  conn_ = nullptr;
  in_transaction_ = false;
  SM_ASSIGN_OR_RETURN(conn_, Connect(url_, redacted_));
  return Status::Ok();
}

int PgDb::BackendPid() const { return conn_ != nullptr ? PQbackendPID(conn_) : 0; }

Status PgDb::ErrorFrom(const void* result, std::string_view what) const {
  const auto* r = static_cast<const PGresult*>(result);
  std::string msg = r != nullptr ? PQresultErrorMessage(r) : "";
  if (msg.empty() && conn_ != nullptr) msg = PQerrorMessage(conn_);
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  const char* state = r != nullptr ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  std::string code = state != nullptr ? state : "";
  std::string text = fmt::format("{}: {} [{}]", what, msg, redacted_);
  if (!Connected() || code.starts_with("08") || code.starts_with("57P")) {
    return Status::Unavailable(text);
  }
  if (code.starts_with("23")) return Status::AlreadyExists(text);
  if (code.starts_with("40") || code == "55P03") return Status::Unavailable(text);
  if (code.starts_with("42") || code.starts_with("22")) return Status::InvalidArgument(text);
  return Status::Internal(text);
}

Status PgDb::Exec(std::string_view sql) {
  SM_ASSIGN_OR_RETURN(PostgresSql pg, TranslateToPostgres(sql));
  if (pg.params > 0) return Status::InvalidArgument("postgres exec: parameters need Prepare()");
  SM_RETURN_IF_ERROR(EnsureConnected());
  PGresult* r = PQexec(conn_, pg.text.c_str());
  ExecStatusType st = r != nullptr ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  Status s = Status::Ok();
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && st != PGRES_EMPTY_QUERY) {
    s = ErrorFrom(r, "postgres exec \"" + pg.text.substr(0, 80) + "\"");
  }
  if (r != nullptr) PQclear(r);
  return s;
}

Result<Statement> PgDb::Prepare(std::string_view sql) {
  SM_ASSIGN_OR_RETURN(PostgresSql pg, TranslateToPostgres(sql));
  return Statement(std::make_unique<PgStatement>(*this, std::move(pg)));
}

Status PgDb::Begin() {
  SM_RETURN_IF_ERROR(Exec("BEGIN"));
  in_transaction_ = true;
  return Status::Ok();
}
Status PgDb::Commit() {
  Status s = Exec("COMMIT");
  in_transaction_ = false;  // committed, or (failed) rolled back by the server
  return s;
}
Status PgDb::Rollback() {
  in_transaction_ = false;
  if (!Connected()) return Status::Ok();  // the server rolled it back with the session
  return Exec("ROLLBACK");
}

Status PgDb::LockSchema() { return Exec("SELECT pg_advisory_xact_lock(7362818)"); }

}  // namespace schedmate::store
