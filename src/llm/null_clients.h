#pragma once
// NullChatClient / NullEmbedder: the offline default. Every call fails with kUnavailable and the
// configured reason (e.g. "not configured"), so callers exercise their built-in fallback.

#include <string>

#include "llm/chat_client.h"
#include "llm/embedder.h"

namespace schedmate::llm {

class NullChatClient final : public ChatClient {
 public:
  explicit NullChatClient(std::string reason = "not configured") : reason_(std::move(reason)) {}
  Result<ChatResponse> Complete(const ChatRequest&) override {
    return Status::Unavailable(reason_);
  }
  Result<ChatResponse> CompleteStream(const ChatRequest&, const StreamCallback&) override {
    return Status::Unavailable(reason_);
  }

 private:
  std::string reason_;
};

class NullEmbedder final : public Embedder {
 public:
  explicit NullEmbedder(std::string reason = "not configured") : reason_(std::move(reason)) {}
  Result<std::vector<Embedding>> Embed(std::span<const std::string>) override {
    return Status::Unavailable(reason_);
  }
  size_t Dimension() const override { return 0; }

 private:
  std::string reason_;
};

}  // namespace schedmate::llm
