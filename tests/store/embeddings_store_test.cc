// SqlHistoryStore's embeddings module: round trip, identity mismatch, atomic replace.
#include <gtest/gtest.h>

#include "store/history_store.h"
#include "store/sqlite_db.h"
#include "store/test_backend.h"
#include "testing/test_util.h"

namespace schedmate::store {
namespace {

using ::schedmate::store::testing::FreshStoreUrl;

TEST(EmbeddingsStoreTest, RoundTripAndCount) {
  SKIP_WITHOUT_STORE_BACKEND();
  auto store = SqlHistoryStore::Open(FreshStoreUrl());
  ASSERT_OK(store.status());
  const EmbedderIdentity id{"hashing", 3};
  auto none = (*store)->StoredEmbedder();
  ASSERT_OK(none.status());
  EXPECT_FALSE(none->has_value());
  const StoredEmbedding a{"j1", {0.5f, -0.25f, 1e-7f}}, b{"j2", {1, 0, 0}};
  ASSERT_OK((*store)->ReplaceEmbeddings(id, std::vector<StoredEmbedding>{a, b}));
  auto got = (*store)->GetEmbedding(id, "j1");
  ASSERT_OK(got.status());
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ(**got, a.vector);
  auto missing = (*store)->GetEmbedding(id, "nope");
  ASSERT_OK(missing.status());
  EXPECT_FALSE(missing->has_value());
  ASSERT_OK((*store)->PutEmbedding(id, {"j3", {0, 1, 0}}));
  EXPECT_EQ(*(*store)->CountEmbeddings(), 3);
  auto who = (*store)->StoredEmbedder();
  ASSERT_OK(who.status());
  ASSERT_TRUE(who->has_value());
  EXPECT_EQ(**who, id);
  ASSERT_OK((*store)->ClearEmbeddings());
  EXPECT_EQ(*(*store)->CountEmbeddings(), 0);
  EXPECT_FALSE((*store)->StoredEmbedder()->has_value());
}

TEST(EmbeddingsStoreTest, ListReturnsEveryVectorInKeyOrder) {
  SKIP_WITHOUT_STORE_BACKEND();
  auto store = SqlHistoryStore::Open(FreshStoreUrl());
  ASSERT_OK(store.status());
  const EmbedderIdentity id{"server:bge", 2};
  auto empty = (*store)->ListEmbeddings(id);
  ASSERT_OK(empty.status());
  EXPECT_TRUE(empty->empty());
  ASSERT_OK((*store)->PutEmbedding(id, {"j2", {0, 1}}));
  ASSERT_OK((*store)->PutEmbedding(id, {"j1", {1, 0}}));
  auto all = (*store)->ListEmbeddings(id);
  ASSERT_OK(all.status());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].key, "j1");
  EXPECT_EQ((*all)[0].vector, (std::vector<float>{1, 0}));
  EXPECT_EQ((*all)[1].key, "j2");
  auto other = (*store)->ListEmbeddings({"server:e5", 2});
  EXPECT_EQ(other.status().code(), StatusCode::kFailedPrecondition);
}

TEST(EmbeddingsStoreTest, VersionOneStoreKeepsItsVectorsUnderTheRenamedKey) {
  SKIP_WITHOUT_STORE_BACKEND();
  const std::string path = FreshStoreUrl();
  {
    // A store written before vectors were keyed by text: schema version 1 only.
    auto db = OpenDatabase(path);
    ASSERT_OK(db.status());
    ASSERT_OK((*db)->Migrate("embeddings", SqlHistoryStore::EmbeddingMigrations().first(1)));
    const float v[2] = {1, 0};
    ASSERT_OK(
        (*db)->Exec("INSERT INTO history_embedder(id, name, dimension) VALUES (1, 'hashing', 2)"));
    auto st = (*db)->Prepare(
        "INSERT INTO history_embeddings(job_id, embedder, dimension, vector) "
        "VALUES ('j1', 'hashing', 2, ?1)");
    ASSERT_OK(st.status());
    st->BindBlob(1, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v), sizeof v));
    ASSERT_OK(st->Run());
  }
  auto store = SqlHistoryStore::Open(path);
  ASSERT_OK(store.status());
  auto got = (*store)->GetEmbedding({"hashing", 2}, "j1");
  ASSERT_OK(got.status());
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ(**got, (std::vector<float>{1, 0}));
}

TEST(EmbeddingsStoreTest, IdentityMismatchIsDetected) {
  SKIP_WITHOUT_STORE_BACKEND();
  auto store = SqlHistoryStore::Open(FreshStoreUrl());
  ASSERT_OK(store.status());
  ASSERT_OK((*store)->PutEmbedding({"hashing", 2}, {"j1", {1, 0}}));
  Status put = (*store)->PutEmbedding({"server:bge", 2}, {"j2", {0, 1}});
  EXPECT_EQ(put.code(), StatusCode::kFailedPrecondition);
  auto get = (*store)->GetEmbedding({"hashing", 4}, "j1");
  EXPECT_EQ(get.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(get.status().message().find("reindex"), std::string::npos);
  // Wrong length for the stated identity.
  EXPECT_EQ((*store)->PutEmbedding({"hashing", 2}, {"j3", {1, 0, 0}}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(*(*store)->CountEmbeddings(), 1);
}

TEST(EmbeddingsStoreTest, FailedReplaceKeepsOldVectors) {
  SKIP_WITHOUT_STORE_BACKEND();
  auto store = SqlHistoryStore::Open(FreshStoreUrl());
  ASSERT_OK(store.status());
  const EmbedderIdentity old_id{"hashing", 2};
  ASSERT_OK((*store)->ReplaceEmbeddings(
      old_id, std::vector<StoredEmbedding>{{"j1", {1, 0}}, {"j2", {0, 1}}}));
  // The second vector has the wrong length: nothing may change.
  Status s = (*store)->ReplaceEmbeddings(
      {"server:bge", 3}, std::vector<StoredEmbedding>{{"j1", {1, 0, 0}}, {"j2", {0, 1}}});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(*(*store)->CountEmbeddings(), 2);
  EXPECT_EQ(**(*store)->StoredEmbedder(), old_id);
  auto v = (*store)->GetEmbedding(old_id, "j2");
  ASSERT_OK(v.status());
  EXPECT_EQ(**v, (std::vector<float>{0, 1}));
}

}  // namespace
}  // namespace schedmate::store
