#include "llm/concurrency_limited_chat_client.h"

#include "core/check.h"

namespace schedmate::llm {
namespace {

class SlotGuard {
 public:
  explicit SlotGuard(CallSlots& slots) : slots_(slots) { slots_.Acquire(); }
  ~SlotGuard() { slots_.Release(); }
  SlotGuard(const SlotGuard&) = delete;
  SlotGuard& operator=(const SlotGuard&) = delete;

 private:
  CallSlots& slots_;
};

}  // namespace

CallSlots::CallSlots(int max_in_flight) : max_(max_in_flight) {
  SM_CHECK(max_in_flight >= 1) << "max_in_flight " << max_in_flight;
}

void CallSlots::Acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return in_flight_ < max_; });
  ++in_flight_;
}

void CallSlots::Release() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_;
  }
  cv_.notify_one();
}

ConcurrencyLimitedChatClient::ConcurrencyLimitedChatClient(ChatClient& target, int max_in_flight)
    : ChatClientWrapper(target), slots_(max_in_flight) {}

Result<ChatResponse> ConcurrencyLimitedChatClient::Call(const ChatRequest& request,
                                                        const StreamCallback* on_delta) {
  SlotGuard guard(slots_);
  return Forward(request, on_delta);
}

ConcurrencyLimitedEmbedder::ConcurrencyLimitedEmbedder(Embedder& target, int max_in_flight)
    : EmbedderWrapper(target), slots_(max_in_flight) {}

Result<std::vector<Embedding>> ConcurrencyLimitedEmbedder::Embed(
    std::span<const std::string> texts) {
  SlotGuard guard(slots_);
  return target().Embed(texts);
}

}  // namespace schedmate::llm
