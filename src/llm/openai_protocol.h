#pragma once
// The OpenAI-compatible wire format, as pure functions (no I/O): request bodies, answer parsing,
// server-sent-event framing, HTTP status mapping. Shared by the HTTP clients, the response cache
// (its key is the canonical request JSON) and tests.
//
// Only the portable subset is written: model, messages, tools, response_format, temperature,
// max_tokens, seed, stop, stream. Never tool_choice, logprobs, n, logit_bias, parallel_tool_calls.

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "llm/chat_client.h"
#include "llm/embedder.h"

namespace schedmate::llm {

// The /v1/chat/completions body. `default_model` fills an empty request.model. Object keys are
// sorted (nlohmann::json), so dump() is canonical for equal requests.
nlohmann::json ChatRequestToJson(const ChatRequest& request, std::string_view default_model,
                                 bool stream);

// Parses a non-streamed /v1/chat/completions answer. kDataLoss with the reason when it is not
// JSON or lacks choices[0].message.
Result<ChatResponse> ParseChatResponse(std::string_view body);

// The /v1/embeddings body and answer (data[i].embedding, ordered by data[i].index).
nlohmann::json EmbeddingRequestToJson(std::span<const std::string> texts, std::string_view model);
Result<std::vector<Embedding>> ParseEmbeddingResponse(std::string_view body, size_t expected_count);

// Maps a non-2xx HTTP answer to a Status (see chat_client.h for the codes); the message is
// "HTTP <code>; <where>: <server's error message>".
Status HttpErrorToStatus(int http_status, std::string_view body, std::string_view where);

// "{base}/v1/<endpoint>", accepting a base URL with or without a trailing "/v1" or "/".
std::string EndpointUrl(std::string_view base_url, std::string_view endpoint);

// Splits a server-sent-event byte stream into the data payloads of its events. Feed bytes in
// any split; each complete event's data (multi-line data joined by '\n') comes out in order.
class SseParser {
 public:
  // Appends `bytes`; returns the data of every event completed by them.
  std::vector<std::string> Feed(std::string_view bytes);
  // Data of a final event not terminated by a blank line (a server closing mid-frame).
  std::optional<std::string> Finish();

 private:
  void TakeLine(std::string_view line, std::vector<std::string>& out);
  std::string buffer_;
  std::string data_;
  bool has_data_ = false;
};

// Folds streamed chat.completion.chunk objects into one ChatResponse: content pieces are
// concatenated, tool-call pieces merged by index, the last finish_reason/usage/model kept.
class StreamAccumulator {
 public:
  // One event's data. Returns the content delta it carried (may be empty); kDataLoss when the
  // data is not a chunk object. "[DONE]" marks the end and is accepted.
  Result<std::string> Add(std::string_view data);
  bool done() const { return done_; }
  bool saw_finish() const { return !response_.finish_reason.empty(); }
  // REQUIRES: the stream ended (done() or saw_finish()).
  ChatResponse Take();

 private:
  ChatResponse response_;
  bool done_ = false;
};

}  // namespace schedmate::llm
