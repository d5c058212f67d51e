#include "llm/logging_chat_client.h"

#include "llm/llm_status.h"

namespace schedmate::llm {

LoggingChatClient::LoggingChatClient(ChatClient& target, CallLog& log, const Clock& clock,
                                     std::string model)
    : ChatClientWrapper(target), log_(log), clock_(clock), model_(std::move(model)) {}

Result<ChatResponse> LoggingChatClient::Call(const ChatRequest& request,
                                             const StreamCallback* on_delta) {
  CallRecord rec;
  rec.kind = on_delta != nullptr ? "chat_stream" : "chat";
  rec.model = request.model.empty() ? model_ : request.model;
  rec.start = clock_.Now();
  Result<ChatResponse> r = Forward(request, on_delta);
  rec.latency = clock_.Now() - rec.start;
  rec.outcome = std::string(StatusCodeName(r.status().code()));
  if (r.ok()) {
    rec.prompt_tokens = r->usage.prompt_tokens;
    rec.completion_tokens = r->usage.completion_tokens;
    rec.items = static_cast<int64_t>(r->message.tool_calls.size());
    rec.finish_reason = r->finish_reason;
  } else {
    rec.error = ShortCause(r.status());
  }
  log_.Record(rec);
  return r;
}

LoggingEmbedder::LoggingEmbedder(Embedder& target, CallLog& log, const Clock& clock,
                                 std::string model)
    : EmbedderWrapper(target), log_(log), clock_(clock), model_(std::move(model)) {}

Result<std::vector<Embedding>> LoggingEmbedder::Embed(std::span<const std::string> texts) {
  CallRecord rec;
  rec.kind = "embed";
  rec.model = model_;
  rec.items = static_cast<int64_t>(texts.size());
  rec.start = clock_.Now();
  Result<std::vector<Embedding>> r = target().Embed(texts);
  rec.latency = clock_.Now() - rec.start;
  rec.outcome = std::string(StatusCodeName(r.status().code()));
  if (!r.ok()) rec.error = ShortCause(r.status());
  log_.Record(rec);
  return r;
}

}  // namespace schedmate::llm
