// llm::ServerTextEmbedder: text::TextEmbedder over an embedding server — dimension fixed by
// configuration, the inner embedder or the first answer; count, emptiness and inner errors;
// unit-length vectors. Against a fake llm::Embedder and the scripted OpenAI-compatible server.
#include "llm/server_text_embedder.h"

#include <gtest/gtest.h>

#include <memory>

#include "llm/llm_setup.h"
#include "testing/llm/scripted_chat_server.h"
#include "testing/test_util.h"

namespace schedmate::llm {
namespace {

using testing::ScriptedChatServer;
using testing::ScriptedReply;

class FakeLlmEmbedder final : public Embedder {
 public:
  Result<std::vector<Embedding>> Embed(std::span<const std::string> texts) override {
    ++calls;
    if (!fail.ok()) return fail;
    std::vector<Embedding> out;
    for (size_t i = 0; i < texts.size(); ++i) out.push_back(Embedding(dims, 0.5f));
    if (drop_last && !out.empty()) out.pop_back();
    if (empty_first && !out.empty()) out.front().clear();
    return out;
  }
  size_t Dimension() const override { return known; }
  size_t dims = 4;
  size_t known = 0;
  bool drop_last = false;
  bool empty_first = false;
  Status fail;
  int calls = 0;
};

TEST(ServerTextEmbedderTest, FirstAnswerFixesTheDimension) {
  FakeLlmEmbedder inner;
  ServerTextEmbedder e(inner, "bge-m3");
  EXPECT_EQ(e.Name(), "bge-m3");
  EXPECT_EQ(e.Dimension(), 0u);
  std::vector<std::string> texts = {"a", "b"};
  auto r = e.Embed(texts);
  ASSERT_OK(r.status());
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ(e.Dimension(), 4u);
  EXPECT_FLOAT_EQ((*r)[0][0], 0.5f);  // (0.5, 0.5, 0.5, 0.5) has unit length already
  inner.dims = 6;
  auto bad = e.Embed(texts);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(bad.status().message().find("expected 4, got 6"), std::string::npos);
}

TEST(ServerTextEmbedderTest, ConfiguredOrInnerDimensionIsEnforced) {
  FakeLlmEmbedder inner;
  std::vector<std::string> texts = {"a"};
  ServerTextEmbedder configured(inner, "m", /*expected_dimension=*/1024);
  EXPECT_EQ(configured.Dimension(), 1024u);
  EXPECT_EQ(configured.Embed(texts).status().code(), StatusCode::kDataLoss);
  inner.known = 8;
  ServerTextEmbedder from_inner(inner, "m");
  EXPECT_EQ(from_inner.Dimension(), 8u);
  EXPECT_EQ(from_inner.Embed(texts).status().code(), StatusCode::kDataLoss);
  inner.dims = 8;
  EXPECT_OK(from_inner.Embed(texts).status());
}

TEST(ServerTextEmbedderTest, CountEmptyAndInnerErrors) {
  FakeLlmEmbedder inner;
  ServerTextEmbedder e(inner);
  EXPECT_EQ(e.Name(), "server");
  std::vector<std::string> texts = {"a", "b"};
  inner.drop_last = true;
  EXPECT_EQ(e.Embed(texts).status().code(), StatusCode::kDataLoss);
  inner.drop_last = false;
  inner.empty_first = true;
  EXPECT_EQ(e.Embed(texts).status().code(), StatusCode::kDataLoss);
  inner.empty_first = false;
  inner.fail = Status::Unavailable("connection refused");
  auto r = e.Embed(texts);
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message(), "connection refused");
  EXPECT_OK(e.Embed({}).status());  // nothing to send: no call
  EXPECT_EQ(inner.calls, 3);
}

std::unique_ptr<LlmSetup> EmbeddingSetup(const std::string& base_url) {
  LlmConfig c;
  c.chat.base_url = base_url;
  c.chat.model = "scripted-model";
  c.embeddings.base_url = base_url;
  c.embeddings.model = "scripted-embed";
  auto s = LlmSetup::Create(std::move(c), LlmSetupDeps{});
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(s).value() : nullptr;
}

TEST(ServerTextEmbedderTest, OverHttpDimensionLearnedCheckedAndNormalised) {
  ScriptedChatServer server;
  ASSERT_OK(server.Start());
  server.SetEmbeddingDimension(16);
  auto setup = EmbeddingSetup(server.base_url());
  ASSERT_NE(setup, nullptr);
  ServerTextEmbedder e(setup->embedder());
  const std::vector<std::string> texts = {"resnet50 imagenet", "llama 7b pretraining"};
  auto v = e.Embed(texts);
  ASSERT_OK(v);
  ASSERT_EQ(v->size(), 2u);
  EXPECT_EQ(e.Dimension(), 16u);
  double norm = 0;
  for (float x : (*v)[0]) norm += x * x;
  EXPECT_NEAR(norm, 1.0, 1e-5);
  // Another model behind the URL: 8 dimensions now.
  server.EnqueueEmbeddings(ScriptedReply::Embeddings({std::vector<float>(8, 1.0f)}));
  const std::vector<std::string> other = {"bert squad"};
  auto bad = e.Embed(other);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(bad.status().message().find("dimension"), std::string::npos) << bad.status().message();
  // A fixed expected dimension refuses the first mismatching answer too.
  ServerTextEmbedder fixed(setup->embedder(), "", 32);
  EXPECT_FALSE(fixed.Embed(texts).ok());
}

TEST(ServerTextEmbedderTest, OverHttpCountMismatchIsDataLoss) {
  ScriptedChatServer server;
  ASSERT_OK(server.Start());
  server.EnqueueEmbeddings(ScriptedReply::Embeddings({{1.0f, 0.0f}}));
  auto setup = EmbeddingSetup(server.base_url());
  ASSERT_NE(setup, nullptr);
  ServerTextEmbedder e(setup->embedder());
  const std::vector<std::string> texts = {"a", "b"};
  auto r = e.Embed(texts);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace schedmate::llm
