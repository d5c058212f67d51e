#pragma once
// LoggingChatClient / LoggingEmbedder: record every call (latency, tokens, outcome) in a CallLog.
// Placed inside the retry wrapper, each HTTP attempt gets its own record.

#include <string>

#include "core/clock.h"
#include "llm/call_log.h"
#include "llm/chat_client.h"
#include "llm/embedder.h"

namespace schedmate::llm {

class LoggingChatClient final : public ChatClient {
 public:
  // `target`, `log` and `clock` must outlive this wrapper. Thread-safe if they are.
  LoggingChatClient(ChatClient& target, CallLog& log, const Clock& clock, std::string model);
  Result<ChatResponse> Complete(const ChatRequest& request) override;
  Result<ChatResponse> CompleteStream(const ChatRequest& request,
                                      const StreamCallback& on_delta) override;

 private:
  Result<ChatResponse> Logged(const char* kind, const ChatRequest& request,
                              const StreamCallback* on_delta);
  ChatClient& target_;
  CallLog& log_;
  const Clock& clock_;
  std::string model_;
};

class LoggingEmbedder final : public Embedder {
 public:
  LoggingEmbedder(Embedder& target, CallLog& log, const Clock& clock, std::string model);
  Result<std::vector<Embedding>> Embed(std::span<const std::string> texts) override;
  size_t Dimension() const override { return target_.Dimension(); }

 private:
  Embedder& target_;
  CallLog& log_;
  const Clock& clock_;
  std::string model_;
};

}  // namespace schedmate::llm
