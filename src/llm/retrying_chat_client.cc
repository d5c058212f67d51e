#include "llm/retrying_chat_client.h"

#include <algorithm>

#include "fmt/format.h"

namespace schedmate::llm {

Retrier::Retrier(RetryPolicy policy, Sleeper& sleeper, uint64_t seed)
    : policy_(policy), sleeper_(sleeper), rng_(seed) {}

Duration Retrier::Backoff(int retry_index) {
  int64_t us = policy_.initial_backoff.micros();
  for (int i = 0; i < retry_index && us < policy_.max_backoff.micros(); ++i) us *= 2;
  us = std::min(us, policy_.max_backoff.micros());
  double u;
  {
    std::lock_guard<std::mutex> lock(mu_);
    u = rng_.Uniform();
  }
  const double factor = 1.0 - std::clamp(policy_.jitter, 0.0, 1.0) * u;
  return Duration::Micros(static_cast<int64_t>(static_cast<double>(us) * factor));
}

Status Retrier::Exhausted(const Status& s, int attempts) {
  return Status(s.code(), fmt::format("{}; after {} attempts", s.message(), attempts));
}

RetryingChatClient::RetryingChatClient(ChatClient& target, RetryPolicy policy, Sleeper& sleeper,
                                       uint64_t seed)
    : ChatClientWrapper(target), retrier_(policy, sleeper, seed) {}

Result<ChatResponse> RetryingChatClient::Call(const ChatRequest& request,
                                              const StreamCallback* on_delta) {
  if (on_delta != nullptr) return CallStream(request, *on_delta);
  return retrier_.Run<ChatResponse>([&] { return Forward(request, nullptr); });
}

Result<ChatResponse> RetryingChatClient::CallStream(const ChatRequest& request,
                                                    const StreamCallback& on_delta) {
  bool delivered = false;
  StreamCallback tracking = [&](const StreamDelta& d) {
    delivered = true;
    return on_delta ? on_delta(d) : true;
  };
  return retrier_.Run<ChatResponse>([&]() -> Result<ChatResponse> {
    Result<ChatResponse> r = Forward(request, &tracking);
    if (!r.ok() && delivered && Retrier::ShouldRetry(r.status())) {
      // The caller already saw part of an answer; a second answer would be spliced onto it.
      return Status(StatusCode::kDataLoss,
                    r.status().message() + "; not retried: part of the stream was delivered");
    }
    return r;
  });
}

RetryingEmbedder::RetryingEmbedder(Embedder& target, RetryPolicy policy, Sleeper& sleeper,
                                   uint64_t seed)
    : EmbedderWrapper(target), retrier_(policy, sleeper, seed) {}

Result<std::vector<Embedding>> RetryingEmbedder::Embed(std::span<const std::string> texts) {
  return retrier_.Run<std::vector<Embedding>>([&] { return target().Embed(texts); });
}

}  // namespace schedmate::llm
