#pragma once
// In-process fakes for llm/ interfaces, for unit tests that need no HTTP at all:
// FakeChatClient replays queued results (then a handler, then kUnavailable) and records every
// request; RecordingSleeper records the pauses it was asked for and returns at once.

#include <deque>
#include <functional>
#include <mutex>
#include <vector>

#include "llm/chat_client.h"
#include "llm/sleeper.h"

namespace schedmate::testing {

class FakeChatClient final : public llm::ChatClient {
 public:
  void Enqueue(Result<llm::ChatResponse> r) {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(r));
  }
  void EnqueueText(const std::string& content, int64_t total_tokens = 0) {
    llm::ChatResponse r;
    r.message = llm::ChatMessage::Assistant(content);
    r.finish_reason = "stop";
    r.usage.total_tokens = total_tokens;
    Enqueue(std::move(r));
  }
  void EnqueueToolCalls(std::vector<llm::ToolCall> calls) {
    llm::ChatResponse r;
    r.message = llm::ChatMessage::Assistant("", std::move(calls));
    r.finish_reason = "tool_calls";
    Enqueue(std::move(r));
  }
  // Answers when the queue is empty.
  void SetHandler(std::function<Result<llm::ChatResponse>(const llm::ChatRequest&)> h) {
    std::lock_guard<std::mutex> lock(mu_);
    handler_ = std::move(h);
  }
  Result<llm::ChatResponse> Complete(const llm::ChatRequest& request) override {
    std::function<Result<llm::ChatResponse>(const llm::ChatRequest&)> handler;
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(request);
      if (!queue_.empty()) {
        Result<llm::ChatResponse> r = std::move(queue_.front());
        queue_.pop_front();
        return r;
      }
      handler = handler_;
    }
    if (handler) return handler(request);
    return Status::Unavailable("FakeChatClient: script exhausted");
  }
  // Delivers the whole content as one delta.
  Result<llm::ChatResponse> CompleteStream(const llm::ChatRequest& request,
                                           const llm::StreamCallback& on_delta) override {
    Result<llm::ChatResponse> r = Complete(request);
    if (r.ok() && on_delta && !r->message.content.empty() &&
        !on_delta(llm::StreamDelta{r->message.content})) {
      return Status::Cancelled("stopped");
    }
    return r;
  }
  std::vector<llm::ChatRequest> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  size_t calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_.size();
  }

 private:
  mutable std::mutex mu_;
  std::deque<Result<llm::ChatResponse>> queue_;
  std::function<Result<llm::ChatResponse>(const llm::ChatRequest&)> handler_;
  std::vector<llm::ChatRequest> requests_;
};

class RecordingSleeper final : public llm::Sleeper {
 public:
  void Sleep(Duration d) override {
    std::lock_guard<std::mutex> lock(mu_);
    sleeps_.push_back(d);
  }
  std::vector<Duration> sleeps() const {
    std::lock_guard<std::mutex> lock(mu_);
    return sleeps_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Duration> sleeps_;
};

}  // namespace schedmate::testing
