#pragma once
// CachingChatClient: an on-disk cache of chat answers.
//
// Rationale: advisor/diagnose runs over the same jobs repeat identical prompts; a cache makes
// re-runs free, offline-repeatable and deterministic. The key is a 64-bit FNV-1a hash of
// `key_namespace` (e.g. base URL + model) and the canonical request JSON (sorted keys, the exact
// body the HTTP client sends, minus "stream"). Each entry stores the full request, which is
// compared on a hit, so a hash collision is a miss, not a wrong answer. Only successful answers
// are stored. Entries never expire: delete the directory to clear it. A streamed call that hits
// the cache delivers the whole content as one delta.

#include <atomic>
#include <optional>
#include <string>

#include "llm/client_wrappers.h"

namespace schedmate::llm {

class CachingChatClient final : public ChatClientWrapper {
 public:
  // `target` must outlive this wrapper. `dir` is created on first write. Thread-safe (entries are
  // written atomically; two racing misses both call the target).
  CachingChatClient(ChatClient& target, std::string dir, std::string key_namespace);

  int64_t hits() const { return hits_.load(); }
  int64_t misses() const { return misses_.load(); }
  // Entries that could not be written (the answer was still returned).
  int64_t write_failures() const { return write_failures_.load(); }
  // The file an answer to `request` is stored in.
  std::string EntryPath(const ChatRequest& request) const;

 private:
  Result<ChatResponse> Call(const ChatRequest& request, const StreamCallback* on_delta) override;
  std::optional<ChatResponse> Lookup(const std::string& path, const std::string& canonical);
  void Store(const std::string& path, const std::string& canonical, const ChatResponse& r);
  std::string Canonical(const ChatRequest& request) const;

  std::string dir_;
  std::string key_namespace_;
  std::atomic<int64_t> hits_{0}, misses_{0}, write_failures_{0};
};

// 64-bit FNV-1a of `data` as 16 lower-case hex digits.
std::string Fnv1a64Hex(std::string_view data);

}  // namespace schedmate::llm
