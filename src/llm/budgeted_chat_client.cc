#include "llm/budgeted_chat_client.h"

#include "fmt/format.h"

namespace schedmate::llm {

BudgetedChatClient::BudgetedChatClient(ChatClient& target, int64_t budget_tokens)
    : ChatClientWrapper(target), budget_(budget_tokens) {}

Status BudgetedChatClient::CheckBudget() const {
  const int64_t used = used_.load();
  if (used >= budget_) {
    return Status::ResourceExhausted(
        fmt::format("token budget used up; {} of {} tokens used", used, budget_));
  }
  return Status::Ok();
}

void BudgetedChatClient::Charge(const ChatRequest& request, const ChatResponse& response) {
  int64_t tokens = response.usage.total_tokens;
  if (tokens <= 0) {
    size_t chars = response.message.content.size();
    for (const ChatMessage& m : request.messages) chars += m.content.size();
    for (const ToolCall& c : response.message.tool_calls) chars += c.arguments.size();
    tokens = static_cast<int64_t>((chars + 3) / 4);
  }
  used_ += tokens;
}

Result<ChatResponse> BudgetedChatClient::Call(const ChatRequest& request,
                                              const StreamCallback* on_delta) {
  SM_RETURN_IF_ERROR(CheckBudget());
  Result<ChatResponse> r = Forward(request, on_delta);
  if (r.ok()) Charge(request, *r);
  return r;
}

}  // namespace schedmate::llm
