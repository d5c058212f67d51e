#pragma once
// ChatClient: the interface every chat-completion backend implements (OpenAI-compatible HTTP
// servers, the offline NullChatClient, test fakes), plus the value types of a request and a
// response. Wrappers (retry, cache, budget, concurrency, logging) implement it by forwarding.
//
// llm/ knows HTTP and JSON, not scheduling: prompts and response parsers live in the component
// that needs them (advisor/, tracker/, failure/).
//
// Error convention for every Status returned by the llm layer: the message starts with a short
// cause ("timeout after 20 s", "HTTP 429", "connection refused") followed by "; " and detail
// (URL, server text). FallbackReason() (engine.h) shows the short cause to users.
// Codes: kUnavailable (connection errors, 408/409/429/5xx, not configured) and
// kDeadlineExceeded (timeouts) may succeed on retry; kInvalidArgument (400/422), kNotFound (404),
// kFailedPrecondition (401/403: key), kResourceExhausted (token budget), kDataLoss (a malformed
// or schema-violating answer) will not.

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace schedmate::llm {

enum class Role { kSystem, kUser, kAssistant, kTool };
std::string_view RoleName(Role role);  // "system", "user", "assistant", "tool"

// A function call the model asks for. `arguments` is the raw JSON text the model produced (it may
// be malformed; callers parse and validate it).
struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;
  friend bool operator==(const ToolCall&, const ToolCall&) = default;
};

struct ChatMessage {
  Role role = Role::kUser;
  std::string content;
  std::vector<ToolCall> tool_calls;  // assistant messages only
  std::string tool_call_id;          // tool messages only: the call this answers

  static ChatMessage System(std::string text) { return {Role::kSystem, std::move(text), {}, {}}; }
  static ChatMessage User(std::string text) { return {Role::kUser, std::move(text), {}, {}}; }
  static ChatMessage Assistant(std::string text, std::vector<ToolCall> calls = {}) {
    return {Role::kAssistant, std::move(text), std::move(calls), {}};
  }
  static ChatMessage Tool(std::string call_id, std::string result) {
    return {Role::kTool, std::move(result), {}, std::move(call_id)};
  }
  friend bool operator==(const ChatMessage&, const ChatMessage&) = default;
};

// A function tool offered to the model; `parameters` is a JSON schema of an object.
struct ToolSpec {
  std::string name;
  std::string description;
  nlohmann::json parameters = nlohmann::json::object();
};

// Structured output: response_format {"type":"json_schema","json_schema":{name,schema,strict}}.
struct JsonSchemaFormat {
  std::string name = "answer";
  nlohmann::json schema;
  bool strict = true;
};

struct ChatRequest {
  std::string model;  // empty: the backend's configured model
  std::vector<ChatMessage> messages;
  std::vector<ToolSpec> tools;
  std::optional<JsonSchemaFormat> response_format;
  std::optional<double> temperature;
  std::optional<int> max_tokens;
  std::optional<int64_t> seed;
  std::vector<std::string> stop;
};

struct TokenUsage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t total_tokens = 0;
  TokenUsage& operator+=(const TokenUsage& o) {
    prompt_tokens += o.prompt_tokens;
    completion_tokens += o.completion_tokens;
    total_tokens += o.total_tokens;
    return *this;
  }
};

struct ChatResponse {
  ChatMessage message;        // role kAssistant; content and/or tool_calls
  std::string finish_reason;  // "stop", "length", "tool_calls", ... as the server said
  TokenUsage usage;           // zeros when the server did not report usage
  std::string model;          // as reported by the server
};

// One piece of a streamed answer. Content pieces arrive in order; tool-call pieces are merged into
// the final ChatResponse and are not reported here.
struct StreamDelta {
  std::string content;
};
// Return false to stop the stream early (the call then ends with kCancelled).
using StreamCallback = std::function<bool(const StreamDelta&)>;

class ChatClient {
 public:
  virtual ~ChatClient() = default;
  // One completion. Thread-safety: implementations in llm/ are safe for concurrent calls.
  virtual Result<ChatResponse> Complete(const ChatRequest& request) = 0;
  // Streaming completion: `on_delta` sees content pieces as they arrive (on the calling thread);
  // the return value is the whole answer, as Complete would give it.
  virtual Result<ChatResponse> CompleteStream(const ChatRequest& request,
                                              const StreamCallback& on_delta) = 0;
};

}  // namespace schedmate::llm
