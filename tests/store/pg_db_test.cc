// PostgreSQL-specific behaviour of PgDb (store/pg_db.h); the shared cases are in
// history_store_test.cc and embeddings_store_test.cc.
#include "store/pg_db.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "store/test_backend.h"
#include "testing/test_util.h"

namespace schedmate::store {
namespace {

using ::schedmate::store::testing::FreshStoreUrl;

TEST(PgDbTest, TypesRoundTripThroughTheTranslatedSchema) {
  SKIP_WITHOUT_STORE_BACKEND();
  auto db = OpenDatabase(FreshStoreUrl());
  ASSERT_OK(db.status());
  ASSERT_OK(
      (*db)->Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, big INTEGER, r REAL, s TEXT, b BLOB)"));
  auto ins = (*db)->Prepare("INSERT INTO t(big, r, s, b) VALUES(?1, ?2, ?3, ?4) RETURNING id");
  ASSERT_OK(ins.status());
  const uint8_t bytes[] = {0, 1, 0xff, '\\', 'x'};
  ins->BindInt(1, std::numeric_limits<int64_t>::max())
      .BindDouble(2, 0.1)
      .BindText(3, "naïve 'quoted' ?")
      .BindBlob(4, bytes);
  auto row = ins->Step();
  ASSERT_OK(row.status());
  ASSERT_TRUE(*row);
  int64_t id = ins->ColumnInt(0);
  EXPECT_GT(id, 0);
  auto sel = (*db)->Prepare("SELECT big, r, s, b, NULL FROM t WHERE id = ?");
  ASSERT_OK(sel.status());
  sel->BindInt(1, id);
  ASSERT_TRUE(*sel->Step());
  EXPECT_EQ(sel->ColumnInt(0), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(sel->ColumnDouble(1), 0.1);
  EXPECT_EQ(sel->ColumnText(2), "naïve 'quoted' ?");
  EXPECT_EQ(sel->ColumnText(3), std::string(reinterpret_cast<const char*>(bytes), sizeof bytes));
  EXPECT_TRUE(sel->IsNull(4));
  EXPECT_FALSE(*sel->Step());
}

TEST(PgDbTest, ErrorsMapToCodesAndChangedRowsCounts) {
  SKIP_WITHOUT_STORE_BACKEND();
  auto db = OpenDatabase(FreshStoreUrl());
  ASSERT_OK(db.status());
  ASSERT_OK((*db)->Exec("CREATE TABLE k(name TEXT PRIMARY KEY, n INTEGER NOT NULL)"));
  ASSERT_OK((*db)->Exec("INSERT INTO k VALUES('a', 1), ('b', 2), ('c', 3)"));
  auto dup = (*db)->Prepare("INSERT INTO k VALUES(?, 1)");
  ASSERT_OK(dup.status());
  dup->BindText(1, "a");
  EXPECT_EQ(dup->Run().code(), StatusCode::kAlreadyExists);
  auto bad = (*db)->Prepare("SELEC 1");
  ASSERT_OK(bad.status());
  EXPECT_EQ(bad->Step().status().code(), StatusCode::kInvalidArgument);
  auto upd = (*db)->Prepare("UPDATE k SET n = n + 1 WHERE n >= ?");
  ASSERT_OK(upd.status());
  upd->BindInt(1, 2);
  ASSERT_OK(upd->Run());
  EXPECT_EQ((*db)->ChangedRows(), 2);
}

TEST(PgDbTest, TransactionsRollBackUnlessCommitted) {
  SKIP_WITHOUT_STORE_BACKEND();
  auto db = OpenDatabase(FreshStoreUrl());
  ASSERT_OK(db.status());
  ASSERT_OK((*db)->Exec("CREATE TABLE k(n INTEGER)"));
  {
    auto tx = Transaction::Start(**db);
    ASSERT_OK(tx.status());
    ASSERT_OK((*db)->Exec("INSERT INTO k VALUES(1)"));
  }
  {
    auto tx = Transaction::Start(**db);
    ASSERT_OK(tx.status());
    ASSERT_OK((*db)->Exec("INSERT INTO k VALUES(2)"));
    ASSERT_OK((*tx)->Commit());
  }
  auto sum = (*db)->Prepare("SELECT COUNT(*), SUM(n) FROM k");
  ASSERT_OK(sum.status());
  ASSERT_TRUE(*sum->Step());
  EXPECT_EQ(sum->ColumnInt(0), 1);
  EXPECT_EQ(sum->ColumnInt(1), 2);
}

TEST(PgDbTest, ConcurrentMigrationsApplyOnce) {
  SKIP_WITHOUT_STORE_BACKEND();
  const std::string url = FreshStoreUrl();
  auto a = OpenDatabase(url), b = OpenDatabase(url);
  ASSERT_OK(a.status());
  ASSERT_OK(b.status());
  const Migration m[] = {{1, "CREATE TABLE once(n INTEGER)"}, {2, "INSERT INTO once VALUES(7)"}};
  ASSERT_OK((*a)->Migrate("m", m));
  ASSERT_OK((*b)->Migrate("m", m));
  EXPECT_EQ(*(*b)->SchemaVersion("m"), 2);
  auto n = (*b)->Prepare("SELECT COUNT(*) FROM once");
  ASSERT_OK(n.status());
  ASSERT_TRUE(*n->Step());
  EXPECT_EQ(n->ColumnInt(0), 1);
  const Migration newer[] = {{1, "CREATE TABLE once(n INTEGER)"}};
  EXPECT_EQ((*a)->Migrate("m", newer).code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace schedmate::store
