#pragma once
// BudgetedChatClient: stops calling the model once a token budget is spent.
//
// Rationale: an advisor run over thousands of jobs must not run up an unbounded bill or hog a
// shared GPU server. Tokens are charged after each successful call from the server's usage
// report; when a server reports none (some streams), ceil(characters / 4) of the prompt and the
// answer is charged instead. A call starts only while used < budget, so the last call may overrun
// the budget by its own size; after that every call fails with kResourceExhausted
// ("token budget used up; ..."), which is never retried.

#include <atomic>
#include <cstdint>

#include "llm/client_wrappers.h"

namespace schedmate::llm {

class BudgetedChatClient final : public ChatClientWrapper {
 public:
  // `target` must outlive this wrapper. Thread-safe.
  BudgetedChatClient(ChatClient& target, int64_t budget_tokens);
  int64_t used_tokens() const { return used_.load(); }
  int64_t budget_tokens() const { return budget_; }

 private:
  Result<ChatResponse> Call(const ChatRequest& request, const StreamCallback* on_delta) override;
  Status CheckBudget() const;
  void Charge(const ChatRequest& request, const ChatResponse& response);
  const int64_t budget_;
  std::atomic<int64_t> used_{0};
};

}  // namespace schedmate::llm
