#pragma once
// CallLog: where LoggingChatClient / LoggingEmbedder record every model call (latency, tokens,
// outcome). JsonlCallLog appends one JSON object per line to a file; StderrCallLog prints one
// human-readable line per call; MemoryCallLog keeps records for tests and `llm check`.

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/sim_time.h"

namespace schedmate::llm {

struct CallRecord {
  SimTime start;      // wall clock at the start of the call
  std::string kind;   // "chat", "chat_stream", "embed"
  std::string model;  // as configured (the server's own name when it reported one)
  Duration latency;
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t items = 0;           // embed: number of texts; chat: number of tool calls returned
  std::string outcome = "OK";  // StatusCodeName of the result
  std::string error;           // short cause, empty on success
  std::string finish_reason;
};

nlohmann::json CallRecordToJson(const CallRecord& r);

class CallLog {
 public:
  virtual ~CallLog() = default;
  // Thread-safe.
  virtual void Record(const CallRecord& record) = 0;
};

class JsonlCallLog final : public CallLog {
 public:
  // Opens `path` for appending (created if missing). kInvalidArgument naming the path on failure.
  static Result<std::unique_ptr<JsonlCallLog>> Open(const std::string& path);
  ~JsonlCallLog() override;
  void Record(const CallRecord& record) override;

 private:
  explicit JsonlCallLog(std::FILE* f) : file_(f) {}
  std::mutex mu_;
  std::FILE* file_;  // owned; guarded by mu_
};

class StderrCallLog final : public CallLog {
 public:
  void Record(const CallRecord& record) override;

 private:
  std::mutex mu_;
};

class MemoryCallLog final : public CallLog {
 public:
  void Record(const CallRecord& record) override;
  std::vector<CallRecord> records() const;

 private:
  mutable std::mutex mu_;
  std::vector<CallRecord> records_;
};

}  // namespace schedmate::llm
