#pragma once
// RetryingChatClient / RetryingEmbedder: retry transient failures with exponential backoff and
// jitter, the OpenAI SDK convention.
//
// Rationale: local and hosted servers shed load with 429/503 and drop connections under load; a
// short, bounded retry hides that without hiding real errors. Retried: kUnavailable (connection
// errors, HTTP 408/409/429/5xx) and kDeadlineExceeded (timeouts). Never retried: everything else
// (400/422 bad request, 401/403 key, 404, malformed answers, budget). Pause before retry n (n = 0,
// 1, ...): min(initial * 2^n, max) * (1 - jitter * u), u uniform in [0, 1) from a seeded Rng, so
// a given seed gives the same pauses. A stream is retried only if no content reached the caller.

#include <mutex>

#include "core/rng.h"
#include "core/sim_time.h"
#include "llm/client_wrappers.h"
#include "llm/sleeper.h"

namespace schedmate::llm {

struct RetryPolicy {
  int max_retries = 2;  // attempts = max_retries + 1
  Duration initial_backoff = Duration::Millis(500);
  Duration max_backoff = Duration::Seconds(8);
  double jitter = 0.25;  // fraction of the pause removed at random
};

// Thread-safe backoff computation and the retry loop shared by the wrappers.
class Retrier {
 public:
  Retrier(RetryPolicy policy, Sleeper& sleeper, uint64_t seed);
  // Runs `attempt` until it succeeds, fails permanently, or retries run out (then the last error,
  // with "; after N attempts" appended).
  template <typename T, typename F>
  Result<T> Run(F&& attempt) {
    for (int n = 0;; ++n) {
      Result<T> r = attempt();
      if (r.ok() || !ShouldRetry(r.status()) || n >= policy_.max_retries) {
        return n == 0 || r.ok() ? std::move(r) : Result<T>(Exhausted(r.status(), n + 1));
      }
      sleeper_.Sleep(Backoff(n));
    }
  }
  static bool ShouldRetry(const Status& s) { return s.IsRetryable(); }
  Duration Backoff(int retry_index);

 private:
  static Status Exhausted(const Status& s, int attempts);
  RetryPolicy policy_;
  Sleeper& sleeper_;
  std::mutex mu_;
  Rng rng_;  // guarded by mu_
};

class RetryingChatClient final : public ChatClientWrapper {
 public:
  // `target` and `sleeper` must outlive this wrapper. Thread-safe if the target is.
  RetryingChatClient(ChatClient& target, RetryPolicy policy, Sleeper& sleeper, uint64_t seed = 1);

 private:
  Result<ChatResponse> Call(const ChatRequest& request, const StreamCallback* on_delta) override;
  Result<ChatResponse> CallStream(const ChatRequest& request, const StreamCallback& on_delta);
  Retrier retrier_;
};

class RetryingEmbedder final : public EmbedderWrapper {
 public:
  RetryingEmbedder(Embedder& target, RetryPolicy policy, Sleeper& sleeper, uint64_t seed = 1);
  Result<std::vector<Embedding>> Embed(std::span<const std::string> texts) override;

 private:
  Retrier retrier_;
};

}  // namespace schedmate::llm
