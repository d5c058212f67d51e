#pragma once
// ConcurrencyLimitedChatClient / ConcurrencyLimitedEmbedder: at most N calls in flight; further
// callers block (first come, first served is not guaranteed) until a slot frees.
//
// Rationale: a single local vLLM or llama-server serves few sequences at once; more parallel
// requests only queue on the server and trip timeouts.

#include <condition_variable>
#include <mutex>

#include "llm/client_wrappers.h"

namespace schedmate::llm {

// A counting semaphore with a run-time limit (std::counting_semaphore's is compile-time).
class CallSlots {
 public:
  // REQUIRES: max_in_flight >= 1.
  explicit CallSlots(int max_in_flight);
  void Acquire();
  void Release();
  int max_in_flight() const { return max_; }

 private:
  const int max_;
  std::mutex mu_;
  std::condition_variable cv_;
  int in_flight_ = 0;  // guarded by mu_
};

class ConcurrencyLimitedChatClient final : public ChatClientWrapper {
 public:
  // `target` must outlive this wrapper. Thread-safe.
  ConcurrencyLimitedChatClient(ChatClient& target, int max_in_flight);

 private:
  Result<ChatResponse> Call(const ChatRequest& request, const StreamCallback* on_delta) override;
  CallSlots slots_;
};

class ConcurrencyLimitedEmbedder final : public EmbedderWrapper {
 public:
  ConcurrencyLimitedEmbedder(Embedder& target, int max_in_flight);
  Result<std::vector<Embedding>> Embed(std::span<const std::string> texts) override;

 private:
  CallSlots slots_;
};

}  // namespace schedmate::llm
