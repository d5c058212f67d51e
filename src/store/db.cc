#include "store/db.h"

#include <fmt/format.h>

#include <ctime>
#include <utility>
#include <vector>

#include "core/strings.h"
#include "store/pg_db.h"
#include "store/sqlite_db.h"

namespace schedmate::store {

// ---------------------------------------------------------------------------------------------
// Statement

Statement& Statement::BindInt(int index, int64_t value) {
  impl_->BindInt(index, value);
  return *this;
}
Statement& Statement::BindDouble(int index, double value) {
  impl_->BindDouble(index, value);
  return *this;
}
Statement& Statement::BindText(int index, std::string_view value) {
  impl_->BindText(index, value);
  return *this;
}
Statement& Statement::BindBlob(int index, std::span<const uint8_t> value) {
  impl_->BindBlob(index, value);
  return *this;
}
Statement& Statement::BindNull(int index) {
  impl_->BindNull(index);
  return *this;
}
Statement& Statement::BindOptionalInt(int index, const std::optional<int64_t>& value) {
  return value ? BindInt(index, *value) : BindNull(index);
}
Statement& Statement::BindOptionalDouble(int index, const std::optional<double>& value) {
  return value ? BindDouble(index, *value) : BindNull(index);
}

Result<bool> Statement::Step() {
  if (impl_ == nullptr) return Status::FailedPrecondition("db: step on an empty statement");
  return impl_->Step();
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
  if (impl_ != nullptr) impl_->Reset();
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
// Migrations

namespace {
std::string UtcNowText() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}
}  // namespace

Result<int> Db::SchemaVersion(std::string_view module) {
  SM_ASSIGN_OR_RETURN(Statement st,
                      Prepare("SELECT version FROM schema_versions WHERE module = ?1"));
  st.BindText(1, module);
  SM_ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? static_cast<int>(st.ColumnInt(0)) : 0;
}

Status Db::Migrate(std::string_view module, std::span<const Migration> migrations) {
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
        path() + ": module '" + std::string(module) + "' is at schema version " +
        std::to_string(current) + ", newer than this build knows (" + std::to_string(newest) + ")");
  }
  for (int v = current + 1; v <= newest; ++v) {
    SM_ASSIGN_OR_RETURN(auto tx, Transaction::Start(*this));
    SM_RETURN_IF_ERROR(LockSchema());
    // Re-read under the lock: another process may have migrated meanwhile.
    SM_ASSIGN_OR_RETURN(int now, SchemaVersion(module));
    if (now >= v) continue;  // tx rolls back (nothing written)
    Status s = Exec(migrations[v - 1].sql);
    if (!s.ok()) {
      return s.WithContext("migrating '" + std::string(module) + "' to version " +
                           std::to_string(v));
    }
    SM_ASSIGN_OR_RETURN(Statement st, Prepare(UpsertSql("schema_versions",
                                                        "module, version, applied_at", "module")));
    st.BindText(1, module).BindInt(2, v).BindText(3, UtcNowText());
    SM_RETURN_IF_ERROR(st.Run());
    SM_RETURN_IF_ERROR(tx->Commit());
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Transaction

Result<std::unique_ptr<Transaction>> Transaction::Start(Db& db) {
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

// ---------------------------------------------------------------------------------------------
// Helpers

std::string UpsertSql(std::string_view table, std::string_view columns, std::string_view keys) {
  std::vector<std::string> cols, key_cols;
  for (auto c : Split(columns, ',')) cols.emplace_back(Trim(c));
  for (auto k : Split(keys, ',')) key_cols.emplace_back(Trim(k));
  std::string values, updates;
  for (size_t i = 0; i < cols.size(); ++i) {
    values += fmt::format("{}?{}", i == 0 ? "" : ",", i + 1);
    bool is_key = false;
    for (const auto& k : key_cols) is_key = is_key || k == cols[i];
    if (!is_key) {
      updates += fmt::format("{}{} = excluded.{}", updates.empty() ? "" : ", ", cols[i], cols[i]);
    }
  }
  std::string sql =
      fmt::format("INSERT INTO {}({}) VALUES({}) ON CONFLICT({}) ", table, columns, values, keys);
  return sql + (updates.empty() ? "DO NOTHING" : "DO UPDATE SET " + updates);
}

Result<StoreLocation> ParseStoreUrl(std::string_view url) {
  StoreLocation loc;
  if (StartsWith(url, "postgresql://") || StartsWith(url, "postgres://")) {
    loc.dialect = Dialect::kPostgres;
    loc.target = std::string(url);
    return loc;
  }
  if (StartsWith(url, "sqlite://")) {
    loc.target = std::string(url.substr(9));  // sqlite:///abs -> /abs, sqlite://rel -> rel
  } else if (url.find("://") != std::string_view::npos) {
    return Status::InvalidArgument(
        fmt::format("store.url '{}': unknown scheme (want sqlite:///path or postgresql://...)",
                    RedactUrl(url)));
  } else {
    loc.target = std::string(url);
  }
  if (loc.target.empty()) {
    return Status::InvalidArgument(fmt::format("store.url '{}': no database path", url));
  }
  return loc;
}

std::string RedactUrl(std::string_view url) {
  size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  size_t at = url.find('@', scheme + 3);
  size_t slash = url.find('/', scheme + 3);
  if (at == std::string_view::npos || (slash != std::string_view::npos && slash < at)) {
    // No user info; a password may still be a query parameter.
    std::string out(url);
    if (size_t p = out.find("password="); p != std::string::npos) {
      size_t end = out.find('&', p);
      out.replace(p + 9, (end == std::string::npos ? out.size() : end) - p - 9, "***");
    }
    return out;
  }
  size_t colon = url.find(':', scheme + 3);
  if (colon == std::string_view::npos || colon > at) return std::string(url);
  return std::string(url.substr(0, colon + 1)) + "***" + std::string(url.substr(at));
}

Result<std::unique_ptr<Db>> OpenDatabase(std::string_view url) {
  SM_ASSIGN_OR_RETURN(StoreLocation loc, ParseStoreUrl(url));
  if (loc.dialect == Dialect::kPostgres) {
    SM_ASSIGN_OR_RETURN(std::unique_ptr<PgDb> db, PgDb::Open(loc.target));
    return std::unique_ptr<Db>(std::move(db));
  }
  SM_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(loc.target));
  return std::unique_ptr<Db>(std::move(db));
}

}  // namespace schedmate::store
