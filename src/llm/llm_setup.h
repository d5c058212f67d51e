#pragma once
// LlmSetup: the configured chat client and embedder, wrapped and ready, for the CLI groups and
// the service. Owns the transport and every wrapper. The chat stack, outermost first:
//   CachingChatClient (cache_dir set) -> BudgetedChatClient (token_budget > 0)
//   -> RetryingChatClient -> LoggingChatClient (call_log set) -> ConcurrencyLimitedChatClient
//   -> OpenAiCompatibleClient -> HttpTransport
// so cache hits cost no budget, each HTTP attempt is logged, and backoff pauses hold no slot.
// The embedder: Caching (in memory) -> Retrying -> Logging -> ConcurrencyLimited ->
// OpenAiEmbedder.
// Not configured (or backend: none): NullChatClient / NullEmbedder ("not configured").

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "core/clock.h"
#include "llm/call_log.h"
#include "llm/chat_client.h"
#include "llm/embedder.h"
#include "llm/http_transport.h"
#include "llm/llm_config.h"
#include "llm/sleeper.h"

namespace schedmate::llm {

class BudgetedChatClient;
class CachingChatClient;

// Seams for tests; every null member gets the real implementation.
struct LlmSetupDeps {
  std::unique_ptr<HttpTransport> transport;
  std::unique_ptr<Sleeper> sleeper;
  std::unique_ptr<CallLog> call_log;  // overrides config.call_log
  const Clock* clock = nullptr;       // may be null; must outlive the setup otherwise
};

class LlmSetup {
 public:
  // kInvalidArgument when the call log file cannot be opened.
  static Result<std::unique_ptr<LlmSetup>> Create(LlmConfig config, LlmSetupDeps deps = {});
  ~LlmSetup();
  LlmSetup(const LlmSetup&) = delete;
  LlmSetup& operator=(const LlmSetup&) = delete;

  const LlmConfig& config() const { return config_; }
  bool chat_configured() const { return config_.chat_configured(); }
  bool embeddings_configured() const { return config_.embeddings_configured(); }

  // The full chat stack (see above). Thread-safe.
  ChatClient& chat() { return *chat_top_; }
  // Only the logging + HTTP layers, with the configured timeouts: no cache, budget or retries
  // (for `llm check`, where each probe must really reach the server).
  ChatClient& direct_chat() { return *direct_chat_; }
  Embedder& embedder() { return *embed_top_; }

  // A quick health probe (one tiny completion, probe_timeout, no retries); the outcome is
  // remembered, so several components in one run probe once. kUnavailable "not configured" when
  // no chat endpoint is set.
  Status Probe();

  // "Qwen2.5-7B-Instruct" (the chat model), for engine labels; "" when not configured.
  const std::string& chat_model() const { return config_.chat.model; }
  // Cache and budget wrappers, or nullptr when not enabled.
  const CachingChatClient* cache() const { return cache_; }
  const BudgetedChatClient* budget() const { return budget_; }

 private:
  explicit LlmSetup(LlmConfig config) : config_(std::move(config)) {}
  template <typename T, typename... Args>
  T& Own(Args&&... args);

  LlmConfig config_;
  std::unique_ptr<HttpTransport> transport_;
  std::unique_ptr<Sleeper> sleeper_;
  std::unique_ptr<CallLog> call_log_;
  std::unique_ptr<Clock> own_clock_;
  const Clock* clock_ = nullptr;
  std::vector<std::shared_ptr<void>> layers_;  // wrappers, destroyed in reverse order
  ChatClient* chat_top_ = nullptr;
  ChatClient* direct_chat_ = nullptr;
  ChatClient* probe_chat_ = nullptr;
  Embedder* embed_top_ = nullptr;
  CachingChatClient* cache_ = nullptr;
  BudgetedChatClient* budget_ = nullptr;
  std::mutex probe_mu_;
  std::optional<Status> probe_result_;  // guarded by probe_mu_
};

// LoadLlmConfig + LlmSetup::Create: what a CLI group calls with its --llm-config value.
Result<std::unique_ptr<LlmSetup>> LoadLlmSetup(const std::optional<std::string>& config_path);

}  // namespace schedmate::llm
