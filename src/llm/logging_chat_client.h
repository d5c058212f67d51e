#pragma once
// LoggingChatClient / LoggingEmbedder: record every call (latency, tokens, outcome) in a CallLog.
// Placed inside the retry wrapper, each HTTP attempt gets its own record.

#include <string>

#include "core/clock.h"
#include "llm/call_log.h"
#include "llm/client_wrappers.h"

namespace schedmate::llm {

class LoggingChatClient final : public ChatClientWrapper {
 public:
  // `target`, `log` and `clock` must outlive this wrapper. Thread-safe if they are.
  LoggingChatClient(ChatClient& target, CallLog& log, const Clock& clock, std::string model);

 private:
  Result<ChatResponse> Call(const ChatRequest& request, const StreamCallback* on_delta) override;
  CallLog& log_;
  const Clock& clock_;
  std::string model_;
};

class LoggingEmbedder final : public EmbedderWrapper {
 public:
  LoggingEmbedder(Embedder& target, CallLog& log, const Clock& clock, std::string model);
  Result<std::vector<Embedding>> Embed(std::span<const std::string> texts) override;

 private:
  CallLog& log_;
  const Clock& clock_;
  std::string model_;
};

}  // namespace schedmate::llm
