#include "testing/llm/scripted_chat_server.h"

#include <httplib.h>

#include <chrono>
#include <cmath>

#include "core/rng.h"
#include "core/strings.h"
#include "text/hash.h"

namespace schedmate::testing {
namespace {

using nlohmann::json;

json Usage(int64_t p, int64_t c) {
  return {{"prompt_tokens", p}, {"completion_tokens", c}, {"total_tokens", p + c}};
}

}  // namespace

ScriptedReply ScriptedReply::Text(const std::string& content, int64_t prompt_tokens,
                                  int64_t completion_tokens, const std::string& finish) {
  json j = {{"id", "chatcmpl-scripted"},
            {"object", "chat.completion"},
            {"model", "scripted-model"},
            {"choices",
             {{{"index", 0},
               {"message", {{"role", "assistant"}, {"content", content}}},
               {"finish_reason", finish}}}},
            {"usage", Usage(prompt_tokens, completion_tokens)}};
  return Raw(200, j.dump());
}

ScriptedReply ScriptedReply::ToolCalls(const std::vector<llm::ToolCall>& calls) {
  json tool_calls = json::array();
  for (const llm::ToolCall& c : calls) {
    tool_calls.push_back({{"id", c.id},
                          {"type", "function"},
                          {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
  }
  json j = {
      {"id", "chatcmpl-scripted"},
      {"object", "chat.completion"},
      {"model", "scripted-model"},
      {"choices",
       {{{"index", 0},
         {"message", {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", tool_calls}}},
         {"finish_reason", "tool_calls"}}}},
      {"usage", Usage(20, 10)}};
  return Raw(200, j.dump());
}

ScriptedReply ScriptedReply::Stream(const std::vector<std::string>& pieces, bool done) {
  ScriptedReply r;
  r.content_type = "text/event-stream";
  auto chunk = [](json delta, json finish) {
    return json{{"id", "chatcmpl-scripted"},
                {"object", "chat.completion.chunk"},
                {"model", "scripted-model"},
                {"choices", {{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}}}}
        .dump();
  };
  r.sse_events.push_back(chunk({{"role", "assistant"}, {"content", ""}}, nullptr));
  for (const std::string& p : pieces) r.sse_events.push_back(chunk({{"content", p}}, nullptr));
  if (done) {
    r.sse_events.push_back(chunk(json::object(), "stop"));
    r.sse_events.push_back("[DONE]");
  }
  return r;
}

ScriptedReply ScriptedReply::Error(int status, const std::string& message) {
  return Raw(status, json{{"error", {{"message", message}, {"type", "scripted_error"}}}}.dump());
}

ScriptedReply ScriptedReply::Raw(int status, std::string body, std::string content_type) {
  ScriptedReply r;
  r.status = status;
  r.body = std::move(body);
  r.content_type = std::move(content_type);
  return r;
}

ScriptedReply ScriptedReply::Embeddings(const std::vector<std::vector<float>>& vectors) {
  json data = json::array();
  for (size_t i = 0; i < vectors.size(); ++i) {
    data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", vectors[i]}});
  }
  return Raw(200, json{{"object", "list"},
                       {"model", "scripted-embed"},
                       {"data", data},
                       {"usage", Usage(static_cast<int64_t>(vectors.size()), 0)}}
                      .dump());
}

std::vector<float> ScriptedChatServer::DeterministicEmbedding(const std::string& text,
                                                              size_t dimension) {
  Rng rng(text::Fnv1a64(text));
  std::vector<float> v(dimension);
  double norm = 0;
  for (float& x : v) {
    x = static_cast<float>(rng.Uniform() * 2.0 - 1.0);
    norm += static_cast<double>(x) * x;
  }
  norm = std::sqrt(norm);
  if (norm > 0) {
    for (float& x : v) x = static_cast<float>(x / norm);
  }
  return v;
}

ScriptedChatServer::ScriptedChatServer(ScriptedChatServerOptions options)
    : options_(options), server_(std::make_unique<httplib::Server>()) {}

ScriptedChatServer::~ScriptedChatServer() { Stop(); }

std::string ScriptedChatServer::base_url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

Status ScriptedChatServer::Start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (started_) return Status::FailedPrecondition("ScriptedChatServer already started");
    started_ = true;
  }
  server_->set_payload_max_length(8u << 20);
  server_->set_keep_alive_max_count(4);
  for (const char* path : {"/v1/chat/completions", "/v1/embeddings"}) {
    server_->Post(
        path, [this, p = std::string(path)](const httplib::Request& req, httplib::Response& res) {
          Serve(p, req, res);
        });
  }
  server_->Get("/v1/models", [this](const httplib::Request& req, httplib::Response& res) {
    Serve("/v1/models", req, res);
  });
  port_ = server_->bind_to_any_port("127.0.0.1");
  if (port_ <= 0) return Status::Unavailable("ScriptedChatServer: cannot bind 127.0.0.1");
  listen_thread_ = std::thread([this] { server_->listen_after_bind(); });
  // httplib's stop() does nothing until the accept loop runs, so a Stop() right after Start()
  // would otherwise leave the loop running forever.
  for (int i = 0; i < 5000 && !server_->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!server_->is_running()) {
    return Status::Unavailable("ScriptedChatServer: the accept loop did not start");
  }
  watchdog_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::microseconds(options_.max_lifetime.micros()),
                 [&] { return stopping_; });
    lock.unlock();
    server_->stop();
  });
  return Status::Ok();
}

void ScriptedChatServer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!started_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  server_->stop();
  if (listen_thread_.joinable()) listen_thread_.join();
  if (watchdog_.joinable()) watchdog_.join();
}

bool ScriptedChatServer::WaitFor(Duration d) {
  std::unique_lock<std::mutex> lock(mu_);
  return !cv_.wait_for(lock, std::chrono::microseconds(d.micros()), [&] { return stopping_; });
}

void ScriptedChatServer::EnqueueChat(ScriptedReply reply) {
  std::lock_guard<std::mutex> lock(mu_);
  chat_queue_.push_back(std::move(reply));
}

void ScriptedChatServer::EnqueueEmbeddings(ScriptedReply reply) {
  std::lock_guard<std::mutex> lock(mu_);
  embed_queue_.push_back(std::move(reply));
}

void ScriptedChatServer::SetChatHandler(
    std::function<ScriptedReply(const nlohmann::json& request)> handler) {
  std::lock_guard<std::mutex> lock(mu_);
  chat_handler_ = std::move(handler);
}

void ScriptedChatServer::SetEmbeddingDimension(size_t dimension) {
  std::lock_guard<std::mutex> lock(mu_);
  embedding_dimension_ = dimension;
}

void ScriptedChatServer::RequireApiKey(std::string key) {
  std::lock_guard<std::mutex> lock(mu_);
  api_key_ = std::move(key);
}

std::vector<RecordedRequest> ScriptedChatServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

size_t ScriptedChatServer::CountRequests(const std::string& path) const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const RecordedRequest& r : requests_) n += r.path == path ? 1 : 0;
  return n;
}

size_t ScriptedChatServer::pending_chat_replies() const {
  std::lock_guard<std::mutex> lock(mu_);
  return chat_queue_.size();
}

void ScriptedChatServer::Serve(const std::string& path, const httplib::Request& req,
                               httplib::Response& res) {
  RecordedRequest rec;
  rec.method = req.method;
  rec.path = path;
  rec.body = req.body;
  for (const auto& [name, value] : req.headers) rec.headers[ToLower(name)] = value;
  rec.json = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (rec.json.is_discarded()) rec.json = nullptr;

  ScriptedReply reply;
  std::function<ScriptedReply(const json&)> handler;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (requests_.size() >= options_.max_requests) {
      reply = ScriptedReply::Error(503, "ScriptedChatServer request limit reached");
    } else {
      requests_.push_back(rec);
      const auto auth = rec.headers.find("authorization");
      if (api_key_ && (auth == rec.headers.end() || auth->second != "Bearer " + *api_key_)) {
        reply = ScriptedReply::Error(401, "invalid API key");
      } else if (path == "/v1/chat/completions") {
        if (!chat_queue_.empty()) {
          reply = std::move(chat_queue_.front());
          chat_queue_.pop_front();
        } else if (chat_handler_) {
          handler = chat_handler_;
        } else {
          reply = ScriptedReply::Error(500, "ScriptedChatServer: chat script exhausted");
        }
      } else if (path == "/v1/embeddings") {
        if (!embed_queue_.empty()) {
          reply = std::move(embed_queue_.front());
          embed_queue_.pop_front();
        } else if (!rec.json.is_object() || !rec.json.contains("input")) {
          reply = ScriptedReply::Error(400, "missing input");
        } else {
          std::vector<std::string> inputs;
          const json& in = rec.json["input"];
          if (in.is_string()) {
            inputs.push_back(in.get<std::string>());
          } else if (in.is_array()) {
            for (const json& x : in)
              inputs.push_back(x.is_string() ? x.get<std::string>() : x.dump());
          }
          std::vector<std::vector<float>> vectors;
          for (const std::string& s : inputs) {
            vectors.push_back(DeterministicEmbedding(s, embedding_dimension_));
          }
          reply = ScriptedReply::Embeddings(vectors);
        }
      } else {
        reply = ScriptedReply::Raw(
            200,
            json{{"object", "list"}, {"data", {{{"id", "scripted-model"}, {"object", "model"}}}}}
                .dump());
      }
    }
  }
  if (handler) reply = handler(rec.json);
  if (reply.delay > Duration::Zero() && !WaitFor(reply.delay)) {
    res.status = 503;
    res.set_content("{\"error\":{\"message\":\"server stopping\"}}", "application/json");
    return;
  }
  res.status = reply.status;
  for (const auto& [name, value] : reply.headers) res.set_header(name, value);
  if (reply.sse_events.empty()) {
    res.set_content(reply.body, reply.content_type);
    return;
  }
  auto events = std::make_shared<std::vector<std::string>>(std::move(reply.sse_events));
  auto next = std::make_shared<size_t>(0);
  const Duration gap = reply.sse_gap;
  res.set_chunked_content_provider(reply.content_type,
                                   [this, events, next, gap](size_t, httplib::DataSink& sink) {
                                     if (*next >= events->size()) {
                                       sink.done();
                                       return true;
                                     }
                                     if (*next > 0 && gap > Duration::Zero() && !WaitFor(gap))
                                       return false;
                                     const std::string frame = "data: " + (*events)[*next] + "\n\n";
                                     ++*next;
                                     return sink.write(frame.data(), frame.size());
                                   });
}

}  // namespace schedmate::testing
