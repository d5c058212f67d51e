// The one place SQL changes dialect (store/sql_dialect.h), and store URLs (store/db.h).
#include "store/sql_dialect.h"

#include <gtest/gtest.h>

#include "store/db.h"
#include "testing/test_util.h"

namespace schedmate::store {
namespace {

TEST(SqlDialectTest, ParametersBecomeNumberedDollars) {
  auto t = TranslateToPostgres("SELECT a FROM t WHERE b = ? AND c = ? AND d = ?7 AND e = ?");
  ASSERT_OK(t.status());
  EXPECT_EQ(t->text, "SELECT a FROM t WHERE b = $1 AND c = $2 AND d = $7 AND e = $8");
  EXPECT_EQ(t->params, 8);
}

TEST(SqlDialectTest, LiteralsIdentifiersAndCommentsAreLeftAlone) {
  auto t = TranslateToPostgres(
      "SELECT 'why? INTEGER' || \"REAL\" FROM t -- a ? here\nWHERE x = ?1 /* BLOB ? */");
  ASSERT_OK(t.status());
  EXPECT_EQ(t->text,
            "SELECT 'why? INTEGER' || \"REAL\" FROM t -- a ? here\nWHERE x = $1 /* BLOB ? */");
  EXPECT_EQ(t->params, 1);
  auto quote = TranslateToPostgres("SELECT 'it''s ?'");
  ASSERT_OK(quote.status());
  EXPECT_EQ(quote->params, 0);
}

TEST(SqlDialectTest, SchemaTypesAndIdsTranslate) {
  auto t = TranslateToPostgres(
      "CREATE TABLE a(id INTEGER PRIMARY KEY AUTOINCREMENT, n integer NOT NULL, x REAL,"
      " v BLOB) WITHOUT ROWID;\nCREATE TABLE b(id INTEGER  PRIMARY KEY CHECK (id = 1))");
  ASSERT_OK(t.status());
  EXPECT_EQ(t->text,
            "CREATE TABLE a(id BIGSERIAL PRIMARY KEY, n BIGINT NOT NULL, x DOUBLE PRECISION,"
            " v BYTEA) ;\nCREATE TABLE b(id BIGSERIAL PRIMARY KEY CHECK (id = 1))");
  auto begin = TranslateToPostgres("BEGIN IMMEDIATE");
  ASSERT_OK(begin.status());
  EXPECT_EQ(begin->text, "BEGIN");
}

TEST(SqlDialectTest, SqliteOnlyInsertsAreRefused) {
  for (const char* sql :
       {"INSERT OR REPLACE INTO t(a) VALUES(?)", "insert or ignore into t values(1)"}) {
    auto t = TranslateToPostgres(sql);
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument) << sql;
  }
  EXPECT_EQ(TranslateToPostgres("SELECT 'open").status().code(), StatusCode::kInvalidArgument);
}

TEST(SqlDialectTest, UpsertNamesEveryNonKeyColumn) {
  EXPECT_EQ(UpsertSql("kv", "key, value", "key"),
            "INSERT INTO kv(key, value) VALUES(?1,?2) ON CONFLICT(key) DO UPDATE SET value = "
            "excluded.value");
  EXPECT_EQ(UpsertSql("m", "job, at, x", "job, at"),
            "INSERT INTO m(job, at, x) VALUES(?1,?2,?3) ON CONFLICT(job, at) DO UPDATE SET x = "
            "excluded.x");
  EXPECT_EQ(UpsertSql("r", "k", "k"), "INSERT INTO r(k) VALUES(?1) ON CONFLICT(k) DO NOTHING");
}

TEST(StoreUrlTest, SchemesPathsAndErrors) {
  auto abs = ParseStoreUrl("sqlite:///var/lib/s.db");
  ASSERT_OK(abs.status());
  EXPECT_EQ(abs->dialect, Dialect::kSqlite);
  EXPECT_EQ(abs->target, "/var/lib/s.db");
  auto plain = ParseStoreUrl("data/s.db");
  ASSERT_OK(plain.status());
  EXPECT_EQ(plain->target, "data/s.db");
  auto pg = ParseStoreUrl("postgresql://u:secret@db:5432/sm");
  ASSERT_OK(pg.status());
  EXPECT_EQ(pg->dialect, Dialect::kPostgres);
  EXPECT_EQ(ParseStoreUrl("postgres://h/db")->dialect, Dialect::kPostgres);
  auto bad = ParseStoreUrl("mysql://u:secret@h/db");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message().find("secret"), std::string::npos) << bad.status().message();
  EXPECT_EQ(ParseStoreUrl("sqlite://").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(RedactUrl("postgresql://u:secret@db/sm"), "postgresql://u:***@db/sm");
  EXPECT_EQ(RedactUrl("postgresql://db/sm?password=x&a=b"), "postgresql://db/sm?password=***&a=b");
  EXPECT_EQ(RedactUrl("postgresql://u@db/sm"), "postgresql://u@db/sm");
}

TEST(StoreUrlTest, UnreachableServerIsUnavailableNamingTheUrl) {
  auto db = OpenDatabase("postgresql://u:secret@127.0.0.1:1/none?connect_timeout=2");
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(db.status().message().find("127.0.0.1:1"), std::string::npos);
  EXPECT_EQ(db.status().message().find("secret"), std::string::npos);
}

}  // namespace
}  // namespace schedmate::store
