#pragma once
// ChatClientWrapper / EmbedderWrapper: the bases of the forwarding wrappers (retry, cache,
// budget, concurrency, logging), as LevelDB's EnvWrapper. A wrapper holds the client it forwards
// to and adds one cross-cutting behaviour.
//
// A chat wrapper overrides one hook, Call(request, on_delta), that serves both Complete
// (on_delta == nullptr) and CompleteStream (on_delta points at the caller's callback), so a
// behaviour is written once for both; Forward() passes a call on to the target the same way.
// An embedder wrapper overrides Embed; Dimension() is the target's.

#include <span>
#include <string>
#include <vector>

#include "llm/chat_client.h"
#include "llm/embedder.h"

namespace schedmate::llm {

class ChatClientWrapper : public ChatClient {
 public:
  Result<ChatResponse> Complete(const ChatRequest& request) final { return Call(request, nullptr); }
  Result<ChatResponse> CompleteStream(const ChatRequest& request,
                                      const StreamCallback& on_delta) final {
    return Call(request, &on_delta);
  }

 protected:
  // `target` must outlive this wrapper.
  explicit ChatClientWrapper(ChatClient& target) : target_(target) {}
  // One call; `on_delta` is null for Complete.
  virtual Result<ChatResponse> Call(const ChatRequest& request, const StreamCallback* on_delta) = 0;
  // The target's Complete (on_delta null) or CompleteStream.
  Result<ChatResponse> Forward(const ChatRequest& request, const StreamCallback* on_delta) {
    return on_delta != nullptr ? target_.CompleteStream(request, *on_delta)
                               : target_.Complete(request);
  }

 private:
  ChatClient& target_;
};

class EmbedderWrapper : public Embedder {
 public:
  size_t Dimension() const final { return target_.Dimension(); }

 protected:
  // `target` must outlive this wrapper.
  explicit EmbedderWrapper(Embedder& target) : target_(target) {}
  Embedder& target() const { return target_; }

 private:
  Embedder& target_;
};

}  // namespace schedmate::llm
