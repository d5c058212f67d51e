#include "llm/call_log.h"

#include <cerrno>
#include <cstring>
#include <iostream>

#include "core/json_dump.h"
#include "fmt/format.h"

namespace schedmate::llm {

nlohmann::json CallRecordToJson(const CallRecord& r) {
  nlohmann::json j = {{"start_us", r.start.micros()},
                      {"kind", r.kind},
                      {"model", r.model},
                      {"latency_ms", static_cast<double>(r.latency.micros()) / 1000.0},
                      {"prompt_tokens", r.prompt_tokens},
                      {"completion_tokens", r.completion_tokens},
                      {"items", r.items},
                      {"outcome", r.outcome}};
  if (!r.error.empty()) j["error"] = r.error;
  if (!r.finish_reason.empty()) j["finish_reason"] = r.finish_reason;
  return j;
}

Result<std::unique_ptr<JsonlCallLog>> JsonlCallLog::Open(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (f == nullptr) {
    return Status::InvalidArgument(
        fmt::format("cannot open LLM call log {}: {}", path, std::strerror(errno)));
  }
  return std::unique_ptr<JsonlCallLog>(new JsonlCallLog(f));
}

JsonlCallLog::~JsonlCallLog() { std::fclose(file_); }

void JsonlCallLog::Record(const CallRecord& record) {
  const std::string line = DumpJson(CallRecordToJson(record)) + "\n";
  std::lock_guard<std::mutex> lock(mu_);
  std::fwrite(line.data(), 1, line.size(), file_);
  std::fflush(file_);
}

void StderrCallLog::Record(const CallRecord& r) {
  std::string line = fmt::format("schedmate: llm {} model={} latency={:.0f}ms tokens={}+{} {}",
                                 r.kind, r.model, static_cast<double>(r.latency.micros()) / 1000.0,
                                 r.prompt_tokens, r.completion_tokens, r.outcome);
  if (!r.error.empty()) line += " (" + r.error + ")";
  std::lock_guard<std::mutex> lock(mu_);
  std::cerr << line << "\n";
}

void MemoryCallLog::Record(const CallRecord& record) {
  std::lock_guard<std::mutex> lock(mu_);
  records_.push_back(record);
}

std::vector<CallRecord> MemoryCallLog::records() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_;
}

}  // namespace schedmate::llm
