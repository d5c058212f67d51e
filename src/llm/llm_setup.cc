#include "llm/llm_setup.h"

#include <algorithm>

#include "llm/budgeted_chat_client.h"
#include "llm/caching_chat_client.h"
#include "llm/caching_embedder.h"
#include "llm/concurrency_limited_chat_client.h"
#include "llm/curl_transport.h"
#include "llm/logging_chat_client.h"
#include "llm/null_clients.h"
#include "llm/openai_client.h"
#include "llm/retrying_chat_client.h"

namespace schedmate::llm {
namespace {

OpenAiEndpoint ToEndpoint(const EndpointConfig& e) {
  return OpenAiEndpoint{e.base_url, e.model, e.api_key, e.connect_timeout, e.timeout};
}

}  // namespace

template <typename T, typename... Args>
T& LlmSetup::Own(Args&&... args) {
  auto p = std::make_shared<T>(std::forward<Args>(args)...);
  T& ref = *p;
  layers_.push_back(std::move(p));
  return ref;
}

LlmSetup::~LlmSetup() {
  while (!layers_.empty()) layers_.pop_back();  // outer wrappers first
}

Result<std::unique_ptr<LlmSetup>> LlmSetup::Create(LlmConfig config, LlmSetupDeps deps) {
  std::unique_ptr<LlmSetup> s(new LlmSetup(std::move(config)));
  const LlmConfig& c = s->config_;
  s->transport_ = deps.transport ? std::move(deps.transport)
                                 : std::unique_ptr<HttpTransport>(new CurlHttpTransport());
  s->sleeper_ = deps.sleeper ? std::move(deps.sleeper) : std::make_unique<RealSleeper>();
  if (deps.clock != nullptr) {
    s->clock_ = deps.clock;
  } else {
    s->own_clock_ = std::make_unique<SystemClock>();
    s->clock_ = s->own_clock_.get();
  }
  if (deps.call_log) {
    s->call_log_ = std::move(deps.call_log);
  } else if (c.call_log == "stderr") {
    s->call_log_ = std::make_unique<StderrCallLog>();
  } else if (!c.call_log.empty()) {
    SM_ASSIGN_OR_RETURN(auto log, JsonlCallLog::Open(c.call_log));
    s->call_log_ = std::move(log);
  }
  const RetryPolicy retry{c.max_retries, Duration::Millis(500), Duration::Seconds(8), 0.25};

  if (!c.chat_configured()) {
    const std::string why = c.backend == "none" ? "disabled (backend: none)" : "not configured";
    auto& null_chat = s->Own<NullChatClient>(why);
    s->chat_top_ = s->direct_chat_ = s->probe_chat_ = &null_chat;
  } else {
    auto logged = [&](ChatClient& inner) -> ChatClient& {
      if (!s->call_log_) return inner;
      return s->Own<LoggingChatClient>(inner, *s->call_log_, *s->clock_, c.chat.model);
    };
    auto& http = s->Own<OpenAiCompatibleClient>(ToEndpoint(c.chat), *s->transport_);
    ChatClient* top = &s->Own<ConcurrencyLimitedChatClient>(http, c.max_concurrency);
    top = &logged(*top);
    s->direct_chat_ = top;
    top = &s->Own<RetryingChatClient>(*top, retry, *s->sleeper_, c.retry_seed);
    if (c.token_budget > 0) {
      s->budget_ = &s->Own<BudgetedChatClient>(*top, c.token_budget);
      top = s->budget_;
    }
    if (!c.cache_dir.empty()) {
      s->cache_ =
          &s->Own<CachingChatClient>(*top, c.cache_dir, c.chat.base_url + "\n" + c.chat.model);
      top = s->cache_;
    }
    s->chat_top_ = top;

    OpenAiEndpoint probe = ToEndpoint(c.chat);
    probe.timeout = std::min(probe.timeout, c.probe_timeout);
    probe.connect_timeout = std::min(probe.connect_timeout, c.probe_timeout);
    s->probe_chat_ = &logged(s->Own<OpenAiCompatibleClient>(probe, *s->transport_));
  }

  if (!c.embeddings_configured()) {
    s->embed_top_ =
        &s->Own<NullEmbedder>(c.backend == "none" ? "disabled (backend: none)" : "not configured");
  } else {
    Embedder* top =
        &s->Own<OpenAiEmbedder>(ToEndpoint(c.embeddings), *s->transport_, c.embedding_dimension);
    top = &s->Own<ConcurrencyLimitedEmbedder>(*top, c.max_concurrency);
    if (s->call_log_) {
      top = &s->Own<LoggingEmbedder>(*top, *s->call_log_, *s->clock_, c.embeddings.model);
    }
    top = &s->Own<RetryingEmbedder>(*top, retry, *s->sleeper_, c.retry_seed + 1);
    top = &s->Own<CachingEmbedder>(*top);
    s->embed_top_ = top;
  }
  return s;
}

Status LlmSetup::Probe() {
  std::lock_guard<std::mutex> lock(probe_mu_);
  if (probe_result_) return *probe_result_;
  ChatRequest request;
  request.messages = {ChatMessage::User("Reply with the single word OK.")};
  request.max_tokens = 4;
  request.temperature = 0.0;
  Result<ChatResponse> r = probe_chat_->Complete(request);
  probe_result_ = r.status();
  return *probe_result_;
}

Result<std::unique_ptr<LlmSetup>> LoadLlmSetup(const std::optional<std::string>& config_path) {
  SM_ASSIGN_OR_RETURN(LlmConfig config, LoadLlmConfig(config_path));
  return LlmSetup::Create(std::move(config));
}

}  // namespace schedmate::llm
