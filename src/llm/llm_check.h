#pragma once
// RunLlmCheck: what `schedmate llm check` measures. Probes the configured endpoints, one real
// request per capability, with no cache, budget or retries so each line reflects the server:
//   chat         a short completion answers with text
//   stream       the same request as server-sent events, ending with [DONE]
//   tool_calls   the model calls an offered function with JSON arguments valid for its schema
//   json_schema  response_format json_schema gives JSON that validates (checked locally)
//   embeddings   /v1/embeddings returns one vector per input, equal lengths
// A failing chat check means the endpoint is unusable; the later chat checks are then skipped.
// The answers are not judged for quality: this is a protocol check.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "llm/llm_setup.h"

namespace schedmate::llm {

struct CheckItem {
  std::string name;
  std::string outcome;  // "ok", "fail", "skip"
  double latency_ms = 0;
  std::string detail;
};

struct LlmCheckReport {
  std::string config_source;
  std::string chat_url, chat_model, embed_url, embed_model;
  std::vector<CheckItem> items;
  Status chat_status;  // the chat check's outcome (OK when the endpoint answered)
  bool all_ok() const;
};

// REQUIRES: setup.chat_configured().
LlmCheckReport RunLlmCheck(LlmSetup& setup);

nlohmann::json LlmCheckReportToJson(const LlmCheckReport& report);
// A fixed-width table, one line per check, preceded by the endpoints.
std::string FormatLlmCheckTable(const LlmCheckReport& report);

}  // namespace schedmate::llm
