#pragma once
// The one place where schedmate's SQL (SQLite's dialect, see db.h) becomes PostgreSQL's.
//
// Rules, applied to words outside string literals, quoted identifiers and comments:
//   ?N / ?                              -> $N (a bare ? takes the highest index so far + 1)
//   INTEGER PRIMARY KEY [AUTOINCREMENT] -> BIGSERIAL PRIMARY KEY (SQLite's rowid ids)
//   INTEGER -> BIGINT, REAL -> DOUBLE PRECISION, BLOB -> BYTEA (SQLite's are 64-bit / bytes)
//   WITHOUT ROWID                       -> (dropped)
//   BEGIN IMMEDIATE                     -> BEGIN
//   INSERT OR REPLACE / INSERT OR IGNORE -> refused (kInvalidArgument): write the portable
//                                          INSERT ... ON CONFLICT form (UpsertSql in db.h)

#include <string>
#include <string_view>

#include "core/result.h"

namespace schedmate::store {

struct PostgresSql {
  std::string text;
  int params = 0;  // the highest parameter index used
};

Result<PostgresSql> TranslateToPostgres(std::string_view sqlite_sql);

}  // namespace schedmate::store
