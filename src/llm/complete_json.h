#pragma once
// CompleteJson: ask the model for one JSON value that satisfies a schema, and make sure it does.
//
// Rationale: response_format json_schema is honoured by vLLM/SGLang/llama-server, ignored by some
// builds, and even constrained decoding stops at max_tokens mid-value. So the request carries
// the schema (response_format, strict) and the answer is parsed and validated here (see
// json_schema.h). Leniency, applied before parsing: surrounding blanks and one ``` / ```json
// fence are removed. When the answer is malformed or violates the schema, the model is told what
// was wrong and asked again, up to `repair_attempts` times; then the call fails with kDataLoss
// whose message says why ("malformed JSON from model; ..." or "schema violation at $.x: ...").

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "llm/chat_client.h"

namespace schedmate::llm {

struct JsonCallOptions {
  std::string schema_name = "answer";
  std::optional<double> temperature = 0.0;
  std::optional<int> max_tokens = 1024;
  std::optional<int64_t> seed;
  int repair_attempts = 1;
};

struct JsonAnswer {
  nlohmann::json value;
  std::string raw;   // the accepted answer's text
  int attempts = 0;  // model calls made
  TokenUsage usage;  // summed over the attempts
};

// kInvalidArgument when `schema` uses keywords the validator does not check; the client's error
// when a call fails; kDataLoss when no attempt produced valid JSON.
Result<JsonAnswer> CompleteJsonDetailed(ChatClient& client, std::vector<ChatMessage> messages,
                                        const nlohmann::json& schema,
                                        const JsonCallOptions& options = {});
Result<nlohmann::json> CompleteJson(ChatClient& client, std::vector<ChatMessage> messages,
                                    const nlohmann::json& schema,
                                    const JsonCallOptions& options = {});

// Parses model text as JSON after the leniency above and validates it against `schema`.
// kDataLoss with the reason on failure.
Result<nlohmann::json> ParseModelJson(std::string_view text, const nlohmann::json& schema);

}  // namespace schedmate::llm
