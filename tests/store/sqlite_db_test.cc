#include "store/sqlite_db.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include "core/file_util.h"
#include "testing/test_util.h"

namespace schedmate::store {
namespace {

using testing::TempDir;

TEST(SqliteDbTest, OpensWithWalAndNormalSync) {
  TempDir dir;
  auto db = SqliteDb::Open(dir.File("sub/a.db"));
  ASSERT_OK(db);
  auto st = (*db)->Prepare("PRAGMA journal_mode");
  ASSERT_OK(st);
  ASSERT_TRUE(*st->Step());
  EXPECT_EQ(st->ColumnText(0), "wal");
  auto sync = (*db)->Prepare("PRAGMA synchronous");
  ASSERT_OK(sync);
  ASSERT_TRUE(*sync->Step());
  EXPECT_EQ(sync->ColumnInt(0), 1);  // NORMAL
}

TEST(SqliteDbTest, PreparedStatementsBindAndRead) {
  auto db = SqliteDb::Open(":memory:");
  ASSERT_OK(db);
  ASSERT_OK((*db)->Exec("CREATE TABLE t(a INTEGER, b REAL, c TEXT)"));
  auto ins = (*db)->Prepare("INSERT INTO t VALUES(?1, ?2, ?3)");
  ASSERT_OK(ins);
  ins->BindInt(1, 7).BindDouble(2, 2.5).BindText(3, "x");
  ASSERT_OK(ins->Run());
  ins->BindInt(1, 8).BindNull(2).BindText(3, std::string("y\0z", 3));
  ASSERT_OK(ins->Run());
  auto sel = (*db)->Prepare("SELECT a, b, c FROM t ORDER BY a");
  ASSERT_OK(sel);
  ASSERT_TRUE(*sel->Step());
  EXPECT_EQ(sel->ColumnInt(0), 7);
  EXPECT_DOUBLE_EQ(*sel->ColumnOptionalDouble(1), 2.5);
  EXPECT_EQ(sel->ColumnText(2), "x");
  ASSERT_TRUE(*sel->Step());
  EXPECT_FALSE(sel->ColumnOptionalDouble(1).has_value());
  EXPECT_EQ(sel->ColumnText(2), std::string("y\0z", 3));
  EXPECT_FALSE(*sel->Step());
}

TEST(SqliteDbTest, SyntaxErrorIsInvalidArgument) {
  auto db = SqliteDb::Open(":memory:");
  ASSERT_OK(db);
  auto st = (*db)->Prepare("SELEC nonsense");
  EXPECT_EQ(st.status().code(), StatusCode::kInvalidArgument);
}

TEST(SqliteDbTest, TransactionRollsBackUnlessCommitted) {
  auto db = SqliteDb::Open(":memory:");
  ASSERT_OK(db);
  ASSERT_OK((*db)->Exec("CREATE TABLE t(a INTEGER)"));
  {
    auto tx = Transaction::Start(**db);
    ASSERT_OK(tx);
    ASSERT_OK((*db)->Exec("INSERT INTO t VALUES(1)"));
  }  // rolled back
  {
    auto tx = Transaction::Start(**db);
    ASSERT_OK(tx);
    ASSERT_OK((*db)->Exec("INSERT INTO t VALUES(2)"));
    ASSERT_OK((*tx)->Commit());
  }
  auto sel = (*db)->Prepare("SELECT group_concat(a) FROM t");
  ASSERT_OK(sel);
  ASSERT_TRUE(*sel->Step());
  EXPECT_EQ(sel->ColumnText(0), "2");
}

TEST(SqliteDbTest, MigrationsApplyOncePerModuleInOrder) {
  TempDir dir;
  std::vector<Migration> v1 = {{1, "CREATE TABLE svc_a(x INTEGER)"}};
  std::vector<Migration> v2 = {{1, "CREATE TABLE svc_a(x INTEGER)"},
                               {2, "ALTER TABLE svc_a ADD COLUMN y TEXT"}};
  {
    auto db = SqliteDb::Open(dir.File("m.db"));
    ASSERT_OK(db);
    ASSERT_OK((*db)->Migrate("service", v1));
    ASSERT_OK((*db)->Migrate("service", v1));  // idempotent
    EXPECT_EQ(*(*db)->SchemaVersion("service"), 1);
    EXPECT_EQ(*(*db)->SchemaVersion("other"), 0);
  }
  {
    auto db = SqliteDb::Open(dir.File("m.db"));
    ASSERT_OK(db);
    ASSERT_OK((*db)->Migrate("service", v2));
    EXPECT_EQ(*(*db)->SchemaVersion("service"), 2);
    ASSERT_OK((*db)->Exec("INSERT INTO svc_a(x, y) VALUES(1, 'a')"));
    // An older build must refuse a newer schema.
    Status s = (*db)->Migrate("service", v1);
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  }
}

TEST(SqliteDbTest, FailedMigrationKeepsPreviousVersion) {
  auto db = SqliteDb::Open(":memory:");
  ASSERT_OK(db);
  std::vector<Migration> bad = {{1, "CREATE TABLE ok1(x)"}, {2, "CREATE TABLE ok1(x)"}};
  EXPECT_FALSE((*db)->Migrate("m", bad).ok());
  EXPECT_EQ(*(*db)->SchemaVersion("m"), 1);
  std::vector<Migration> misnumbered = {{2, "SELECT 1"}};
  EXPECT_EQ((*db)->Migrate("n", misnumbered).code(), StatusCode::kInvalidArgument);
}

TEST(SqliteDbTest, NotADatabaseIsDataLoss) {
  TempDir dir;
  ASSERT_OK(WriteStringToFile(dir.File("junk.db"), std::string(4096, 'x')));
  auto db = SqliteDb::Open(dir.File("junk.db"));
  EXPECT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("junk.db"), std::string::npos);
}

// A child commits rows then is SIGKILLed mid-way through an uncommitted transaction; the parent
// must see every committed row and none of the uncommitted ones.
TEST(SqliteDbTest, CommittedDataSurvivesKill9) {
  TempDir dir;
  std::string path = dir.File("crash.db");
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(pipefd[0]);
    auto db = SqliteDb::Open(path);
    if (!db.ok()) _exit(3);
    if (!(*db)->Exec("CREATE TABLE t(a INTEGER)").ok()) _exit(4);
    for (int i = 0; i < 100; ++i) {
      auto tx = Transaction::Start(**db);
      if (!tx.ok()) _exit(5);
      if (!(*db)->Exec("INSERT INTO t VALUES(" + std::to_string(i) + ")").ok()) _exit(6);
      if (!(*tx)->Commit().ok()) _exit(7);
    }
    // An open transaction that never commits.
    if (!(*db)->Begin().ok()) _exit(8);
    if (!(*db)->Exec("INSERT INTO t VALUES(1000)").ok()) _exit(9);
    char c = 'r';
    if (write(pipefd[1], &c, 1) != 1) _exit(10);
    pause();
    _exit(0);
  }
  close(pipefd[1]);
  char c = 0;
  ASSERT_EQ(read(pipefd[0], &c, 1), 1);
  close(pipefd[0]);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));

  auto db = SqliteDb::Open(path);
  ASSERT_OK(db);
  auto sel = (*db)->Prepare("SELECT COUNT(*), MAX(a) FROM t");
  ASSERT_OK(sel);
  ASSERT_TRUE(*sel->Step());
  EXPECT_EQ(sel->ColumnInt(0), 100);
  EXPECT_EQ(sel->ColumnInt(1), 99);
}

}  // namespace
}  // namespace schedmate::store
