#include "llm/openai_client.h"

#include "core/json_dump.h"
#include "fmt/format.h"
#include "llm/llm_status.h"
#include "llm/openai_protocol.h"

namespace schedmate::llm {
namespace {

HttpRequest BaseRequest(const OpenAiEndpoint& e, std::string_view endpoint, std::string body) {
  HttpRequest r;
  r.method = "POST";
  r.url = EndpointUrl(e.base_url, endpoint);
  r.headers.emplace_back("Content-Type", "application/json");
  if (!e.api_key.empty()) r.headers.emplace_back("Authorization", "Bearer " + e.api_key);
  r.body = std::move(body);
  r.connect_timeout = e.connect_timeout;
  r.total_timeout = e.timeout;
  return r;
}

std::string Where(const HttpRequest& r) { return r.method + " " + r.url; }

}  // namespace

OpenAiCompatibleClient::OpenAiCompatibleClient(OpenAiEndpoint endpoint, HttpTransport& transport)
    : endpoint_(std::move(endpoint)), transport_(transport) {}

HttpRequest OpenAiCompatibleClient::MakeRequest(const ChatRequest& request, bool stream) const {
  HttpRequest r = BaseRequest(endpoint_, "chat/completions",
                              DumpJson(ChatRequestToJson(request, endpoint_.model, stream)));
  if (stream) r.headers.emplace_back("Accept", "text/event-stream");
  return r;
}

Result<ChatResponse> OpenAiCompatibleClient::Complete(const ChatRequest& request) {
  const HttpRequest http = MakeRequest(request, /*stream=*/false);
  SM_ASSIGN_OR_RETURN(HttpResponse response, transport_.Send(http));
  if (response.status < 200 || response.status >= 300) {
    return HttpErrorToStatus(response.status, response.body, Where(http));
  }
  Result<ChatResponse> parsed = ParseChatResponse(response.body);
  if (!parsed.ok()) return WithDetail(parsed.status(), Where(http));
  return parsed;
}

Result<ChatResponse> OpenAiCompatibleClient::CompleteStream(const ChatRequest& request,
                                                            const StreamCallback& on_delta) {
  const HttpRequest http = MakeRequest(request, /*stream=*/true);
  SseParser sse;
  StreamAccumulator acc;
  Status stream_error;
  bool caller_stopped = false;
  int events = 0;
  auto handle_event = [&](const std::string& data) -> bool {
    ++events;
    if (acc.done()) return true;  // ignore anything after [DONE]
    Result<std::string> piece = acc.Add(data);
    if (!piece.ok()) {
      stream_error = piece.status();
      return false;
    }
    if (!piece->empty() && on_delta && !on_delta(StreamDelta{*piece})) {
      caller_stopped = true;
      return false;
    }
    return true;
  };
  auto result = transport_.SendStreaming(http, [&](std::string_view chunk) {
    for (const std::string& data : sse.Feed(chunk)) {
      if (!handle_event(data)) return false;
    }
    return true;
  });
  if (!stream_error.ok()) return WithDetail(stream_error, Where(http));
  if (caller_stopped) return Status::Cancelled("stream stopped by caller; " + Where(http));
  if (!result.ok()) return result.status();
  if (result->status < 200 || result->status >= 300) {
    return HttpErrorToStatus(result->status, result->body, Where(http));
  }
  if (auto last = sse.Finish(); last && !handle_event(*last)) {
    if (!stream_error.ok()) return WithDetail(stream_error, Where(http));
    return Status::Cancelled("stream stopped by caller; " + Where(http));
  }
  if (events == 0) {
    return Status::Unavailable("no server-sent events; " + Where(http) +
                               ": the server answered a stream request without streaming");
  }
  if (!acc.done() && !acc.saw_finish()) {
    return Status::Unavailable("stream cut off; " + Where(http) +
                               ": the server closed it before a finish_reason or [DONE]");
  }
  return acc.Take();
}

OpenAiEmbedder::OpenAiEmbedder(OpenAiEndpoint endpoint, HttpTransport& transport, size_t dimension)
    : endpoint_(std::move(endpoint)), transport_(transport), dimension_(dimension) {}

Result<std::vector<Embedding>> OpenAiEmbedder::Embed(std::span<const std::string> texts) {
  if (texts.empty()) return std::vector<Embedding>{};
  const HttpRequest http = BaseRequest(endpoint_, "embeddings",
                                       DumpJson(EmbeddingRequestToJson(texts, endpoint_.model)));
  SM_ASSIGN_OR_RETURN(HttpResponse response, transport_.Send(http));
  if (response.status < 200 || response.status >= 300) {
    return HttpErrorToStatus(response.status, response.body, Where(http));
  }
  Result<std::vector<Embedding>> parsed = ParseEmbeddingResponse(response.body, texts.size());
  if (!parsed.ok()) return WithDetail(parsed.status(), Where(http));
  const size_t got = (*parsed)[0].size();
  size_t expected = 0;
  if (!dimension_.compare_exchange_strong(expected, got) && expected != got) {
    return Status::DataLoss(
        fmt::format("embedding dimension {} (expected {}); {}", got, expected, Where(http)));
  }
  return parsed;
}

}  // namespace schedmate::llm
