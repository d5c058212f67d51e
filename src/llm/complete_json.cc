#include "llm/complete_json.h"

#include "core/strings.h"
#include "fmt/format.h"
#include "llm/json_schema.h"

namespace schedmate::llm {
namespace {

std::string_view StripFence(std::string_view s) {
  s = Trim(s);
  if (!StartsWith(s, "```")) return s;
  size_t first_nl = s.find('\n');
  if (first_nl == std::string_view::npos) return s;
  std::string_view body = s.substr(first_nl + 1);
  body = Trim(body);
  if (EndsWith(body, "```")) body.remove_suffix(3);
  return Trim(body);
}

std::string Excerpt(std::string_view s) {
  std::string out(Utf8Prefix(s, 160));
  for (char& c : out) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s.size() > 160 ? out + "..." : out;
}

}  // namespace

Result<nlohmann::json> ParseModelJson(std::string_view text, const nlohmann::json& schema) {
  std::string_view body = StripFence(text);
  if (body.empty()) return Status::DataLoss("empty answer from model; expected JSON");
  try {
    nlohmann::json value = nlohmann::json::parse(body);
    SM_RETURN_IF_ERROR(ValidateJson(value, schema));
    return value;
  } catch (const nlohmann::json::parse_error& e) {
    return Status::DataLoss(
        fmt::format("malformed JSON from model; parse error at byte {}; "
                    "answer was: {}",
                    e.byte, Excerpt(body)));
  } catch (const nlohmann::json::exception& e) {  // e.g. out_of_range 406: number overflow
    return Status::DataLoss(
        fmt::format("malformed JSON from model; {}; answer was: {}", e.what(), Excerpt(body)));
  }
}

Result<JsonAnswer> CompleteJsonDetailed(ChatClient& client, std::vector<ChatMessage> messages,
                                        const nlohmann::json& schema,
                                        const JsonCallOptions& options) {
  SM_RETURN_IF_ERROR(CheckSchemaSupported(schema));
  ChatRequest request;
  request.messages = std::move(messages);
  request.response_format = JsonSchemaFormat{options.schema_name, schema, /*strict=*/true};
  request.temperature = options.temperature;
  request.max_tokens = options.max_tokens;
  request.seed = options.seed;
  JsonAnswer answer;
  Status last;
  for (int attempt = 0; attempt <= options.repair_attempts; ++attempt) {
    SM_ASSIGN_OR_RETURN(ChatResponse response, client.Complete(request));
    ++answer.attempts;
    answer.usage += response.usage;
    Result<nlohmann::json> parsed = ParseModelJson(response.message.content, schema);
    if (parsed.ok()) {
      answer.value = std::move(parsed).value();
      answer.raw = response.message.content;
      return answer;
    }
    last = parsed.status();
    if (response.finish_reason == "length") {
      last = Status::DataLoss(last.message() + "; the answer was cut off at max_tokens");
    }
    request.messages.push_back(ChatMessage::Assistant(response.message.content));
    request.messages.push_back(ChatMessage::User(
        "Your answer was rejected: " + last.message() +
        "\nReply again with only one JSON value that satisfies the schema, no other text."));
  }
  return Status::DataLoss(fmt::format("{}; after {} attempt{}", last.message(), answer.attempts,
                                      answer.attempts == 1 ? "" : "s"));
}

Result<nlohmann::json> CompleteJson(ChatClient& client, std::vector<ChatMessage> messages,
                                    const nlohmann::json& schema, const JsonCallOptions& options) {
  SM_ASSIGN_OR_RETURN(JsonAnswer answer,
                      CompleteJsonDetailed(client, std::move(messages), schema, options));
  return std::move(answer.value);
}

}  // namespace schedmate::llm
