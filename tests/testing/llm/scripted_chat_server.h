#pragma once
// ScriptedChatServer: a real OpenAI-compatible HTTP server on 127.0.0.1 (ephemeral port) that
// replays scripted answers, for protocol tests of the llm layer and of every component that
// calls a model (advisor, tracker, failure). No model, no network beyond loopback.
//
// Scripting: replies queued per endpoint are served first-in first-out. When the chat queue is
// empty the chat handler (SetChatHandler) answers, else HTTP 500 "script exhausted". Embeddings
// without a queued reply get deterministic vectors (a hash of each input seeds an Rng; unit
// length) of SetEmbeddingDimension() length. Every request is recorded for assertions.
//
// Bounds: at most `max_requests` requests (then 503), bodies up to 8 MiB, and the server stops
// itself after `max_lifetime` even if a test forgets to. Delayed replies wake up early when the
// server stops, so shutdown never waits for them. Thread-safe.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/sim_time.h"
#include "core/status.h"
#include "llm/chat_client.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace schedmate::testing {

struct ScriptedReply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  // When non-empty the reply is a server-sent-event stream: each entry is sent as
  // "data: <entry>\n\n" (include "[DONE]" yourself, or leave it out to test a cut-off stream).
  std::vector<std::string> sse_events;
  Duration delay;    // before the status line
  Duration sse_gap;  // between events
  std::vector<std::pair<std::string, std::string>> headers;

  ScriptedReply& WithDelay(Duration d) {
    delay = d;
    return *this;
  }

  // A chat.completion answer with `content` and usage (prompt, completion tokens).
  static ScriptedReply Text(const std::string& content, int64_t prompt_tokens = 10,
                            int64_t completion_tokens = 5, const std::string& finish = "stop");
  // An answer asking for tool calls (finish_reason "tool_calls").
  static ScriptedReply ToolCalls(const std::vector<llm::ToolCall>& calls);
  // A stream of content pieces as chat.completion.chunk events, then finish_reason "stop" and
  // (when `done`) "[DONE]".
  static ScriptedReply Stream(const std::vector<std::string>& pieces, bool done = true);
  // {"error":{"message":...}} with the given status.
  static ScriptedReply Error(int status, const std::string& message);
  // Any body.
  static ScriptedReply Raw(int status, std::string body,
                           std::string content_type = "application/json");
  // An embeddings answer with the given vectors.
  static ScriptedReply Embeddings(const std::vector<std::vector<float>>& vectors);
};

struct RecordedRequest {
  std::string method;
  std::string path;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  nlohmann::json json;  // the parsed body (null when it was not JSON)
};

struct ScriptedChatServerOptions {
  Duration max_lifetime = Duration::Seconds(120);
  size_t max_requests = 1000;
};

class ScriptedChatServer {
 public:
  explicit ScriptedChatServer(ScriptedChatServerOptions options = {});
  ~ScriptedChatServer();
  ScriptedChatServer(const ScriptedChatServer&) = delete;
  ScriptedChatServer& operator=(const ScriptedChatServer&) = delete;

  // Binds 127.0.0.1 on a free port and serves on a background thread.
  Status Start();
  // Idempotent; also called by the destructor and the lifetime watchdog.
  void Stop();
  int port() const { return port_; }
  std::string base_url() const;  // "http://127.0.0.1:<port>"

  void EnqueueChat(ScriptedReply reply);
  void EnqueueEmbeddings(ScriptedReply reply);
  // Answers chat requests when the queue is empty; gets the parsed request body.
  void SetChatHandler(std::function<ScriptedReply(const nlohmann::json& request)> handler);
  void SetEmbeddingDimension(size_t dimension);  // default 8
  // Every request without "Authorization: Bearer <key>" gets 401.
  void RequireApiKey(std::string key);

  std::vector<RecordedRequest> requests() const;
  size_t CountRequests(const std::string& path) const;
  size_t pending_chat_replies() const;

  // The deterministic vector served for `text` (unit length).
  static std::vector<float> DeterministicEmbedding(const std::string& text, size_t dimension);

 private:
  void Serve(const std::string& path, const httplib::Request& req, httplib::Response& res);
  // Sleeps up to `d`; returns early (false) when the server is stopping.
  bool WaitFor(Duration d);

  ScriptedChatServerOptions options_;
  std::unique_ptr<httplib::Server> server_;
  std::thread listen_thread_;
  std::thread watchdog_;
  int port_ = 0;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;                                             // guarded by mu_
  bool started_ = false;                                              // guarded by mu_
  std::deque<ScriptedReply> chat_queue_;                              // guarded by mu_
  std::deque<ScriptedReply> embed_queue_;                             // guarded by mu_
  std::function<ScriptedReply(const nlohmann::json&)> chat_handler_;  // guarded by mu_
  size_t embedding_dimension_ = 8;                                    // guarded by mu_
  std::optional<std::string> api_key_;                                // guarded by mu_
  std::vector<RecordedRequest> requests_;                             // guarded by mu_
};

}  // namespace schedmate::testing
