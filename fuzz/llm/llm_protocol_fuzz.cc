// libFuzzer target for what an OpenAI-compatible server (or a model) can send back: arbitrary
// bytes as a chat.completion body, an embeddings body, an SSE stream fed in fuzzer-chosen splits
// and folded into a response, a model's JSON answer checked against the schemas the engines use,
// and an HTTP error body. Every path must return a value or a Status, never crash or throw, and
// what it returns must dump as JSON (invalid UTF-8 included).

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/check.h"
#include "core/json_dump.h"
#include "llm/complete_json.h"
#include "llm/json_schema.h"
#include "llm/openai_protocol.h"

namespace {

using namespace schedmate;
using nlohmann::json;

const json& Schema(uint8_t which) {
  static const json kSchemas[] = {
      // failure classification-like
      {{"type", "object"},
       {"properties",
        {{"label", {{"type", "string"}, {"enum", {"infrastructure", "application", "unknown"}}}},
         {"confidence", {{"type", "number"}, {"minimum", 0}, {"maximum", 1}}},
         {"root_cause_line", {{"type", "integer"}, {"nullable", true}}},
         {"evidence",
          {{"type", "array"},
           {"maxItems", 8},
           {"items",
            {{"type", "object"},
             {"properties", {{"line_no", {{"type", "integer"}}}}},
             {"required", {"line_no"}}}}}}}},
       {"required", {"label", "confidence"}},
       {"additionalProperties", false}},
      // tracker records-like
      {{"type", "object"},
       {"properties",
        {{"records",
          {{"type", "array"},
           {"items",
            {{"type", "object"},
             {"properties",
              {{"line_no", {{"type", "integer"}}},
               {"training", {{"type", "boolean"}}},
               {"step", {{"type", "integer"}, {"nullable", true}}},
               {"loss", {{"type", "number"}, {"nullable", true}}},
               {"unit", {{"type", "string"}, {"minLength", 1}, {"maxLength", 8}}}}},
             {"required", {"line_no", "training"}}}}}}}},
       {"required", {"records"}}},
  };
  return kSchemas[which % 2];
}

void CheckDumps(const json& j) { (void)DumpJson(j); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (mode % 5) {
    case 0: {
      auto r = llm::ParseChatResponse(body);
      if (r.ok()) {
        for (const auto& c : r->message.tool_calls) SM_CHECK(!c.name.empty());
      }
      break;
    }
    case 1: {
      auto r = llm::ParseEmbeddingResponse(body, (mode >> 3) & 7);
      if (r.ok()) SM_CHECK(r->size() == static_cast<size_t>((mode >> 3) & 7));
      break;
    }
    case 2: {
      // The stream in chunks whose length the mode byte picks (1..32 bytes).
      llm::SseParser parser;
      llm::StreamAccumulator acc;
      const size_t step = 1 + ((mode >> 3) & 31);
      for (size_t i = 0; i < body.size(); i += step) {
        for (const std::string& event : parser.Feed(body.substr(i, step))) {
          (void)acc.Add(event);
          if (acc.done()) break;
        }
        if (acc.done()) break;
      }
      if (auto last = parser.Finish(); last && !acc.done()) (void)acc.Add(*last);
      if (acc.done() || acc.saw_finish()) (void)acc.Take();
      break;
    }
    case 3: {
      auto r = llm::ParseModelJson(body, Schema(mode >> 3));
      if (r.ok()) {
        SM_CHECK(llm::ValidateJson(*r, Schema(mode >> 3)).ok());
        CheckDumps(*r);
      }
      break;
    }
    case 4: {
      Status s = llm::HttpErrorToStatus(400 + (mode >> 3), body, "POST /v1/chat/completions");
      SM_CHECK(!s.ok());
      CheckDumps(json(s.message()));
      break;
    }
  }
  return 0;
}
