#include "llm/openai_protocol.h"

#include <algorithm>
#include <map>

#include "core/strings.h"
#include "fmt/format.h"

namespace schedmate::llm {
namespace {

using nlohmann::json;

json MessageToJson(const ChatMessage& m) {
  json j = {{"role", RoleName(m.role)}};
  if (m.role == Role::kAssistant && !m.tool_calls.empty()) {
    // OpenAI servers expect null content beside tool calls when there is no text.
    j["content"] = m.content.empty() ? json(nullptr) : json(m.content);
    json calls = json::array();
    for (const ToolCall& c : m.tool_calls) {
      calls.push_back({{"id", c.id},
                       {"type", "function"},
                       {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    }
    j["tool_calls"] = std::move(calls);
  } else {
    j["content"] = m.content;
  }
  if (m.role == Role::kTool) j["tool_call_id"] = m.tool_call_id;
  return j;
}

// Text of a JSON value that should be a string; objects (some servers send tool arguments as an
// object) are serialised; null is empty.
std::string TextOf(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

TokenUsage ParseUsage(const json& u) {
  TokenUsage usage;
  if (!u.is_object()) return usage;
  auto get = [&](const char* key) -> int64_t {
    auto it = u.find(key);
    return it != u.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
  };
  usage.prompt_tokens = get("prompt_tokens");
  usage.completion_tokens = get("completion_tokens");
  usage.total_tokens = get("total_tokens");
  if (usage.total_tokens == 0) usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
  return usage;
}

std::string Abbreviate(std::string_view s, size_t max = 200) {
  std::string out(Utf8Prefix(s, max));
  for (char& c : out) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (s.size() > max) out += "...";
  return out;
}

Result<json> ParseJson(std::string_view body, std::string_view what) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::DataLoss(
        fmt::format("malformed JSON from server; {} was: {}", what, Abbreviate(body)));
  }
  return j;
}

}  // namespace

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kSystem:
      return "system";
    case Role::kUser:
      return "user";
    case Role::kAssistant:
      return "assistant";
    case Role::kTool:
      return "tool";
  }
  return "user";
}

json ChatRequestToJson(const ChatRequest& request, std::string_view default_model, bool stream) {
  json j;
  j["model"] = request.model.empty() ? std::string(default_model) : request.model;
  json messages = json::array();
  for (const ChatMessage& m : request.messages) messages.push_back(MessageToJson(m));
  j["messages"] = std::move(messages);
  if (!request.tools.empty()) {
    json tools = json::array();
    for (const ToolSpec& t : request.tools) {
      tools.push_back(
          {{"type", "function"},
           {"function",
            {{"name", t.name}, {"description", t.description}, {"parameters", t.parameters}}}});
    }
    j["tools"] = std::move(tools);
  }
  if (request.response_format) {
    j["response_format"] = {{"type", "json_schema"},
                            {"json_schema",
                             {{"name", request.response_format->name},
                              {"schema", request.response_format->schema},
                              {"strict", request.response_format->strict}}}};
  }
  if (request.temperature) j["temperature"] = *request.temperature;
  if (request.max_tokens) j["max_tokens"] = *request.max_tokens;
  if (request.seed) j["seed"] = *request.seed;
  if (!request.stop.empty()) j["stop"] = request.stop;
  if (stream) j["stream"] = true;
  return j;
}

Result<ChatResponse> ParseChatResponse(std::string_view body) {
  SM_ASSIGN_OR_RETURN(json j, ParseJson(body, "chat answer"));
  if (!j.is_object()) return Status::DataLoss("chat answer is not an object; " + Abbreviate(body));
  auto choices = j.find("choices");
  if (choices == j.end() && j.contains("error")) {
    // Some servers report failures inside a 200 answer.
    return HttpErrorToStatus(500, body, "error in a 200 answer");
  }
  if (choices == j.end() || !choices->is_array() || choices->empty() ||
      !(*choices)[0].is_object()) {
    return Status::DataLoss("chat answer has no choices; " + Abbreviate(body));
  }
  const json& choice = (*choices)[0];
  auto msg = choice.find("message");
  if (msg == choice.end() || !msg->is_object()) {
    return Status::DataLoss("chat answer has no choices[0].message; " + Abbreviate(body));
  }
  ChatResponse r;
  r.message.role = Role::kAssistant;
  if (auto c = msg->find("content"); c != msg->end()) r.message.content = TextOf(*c);
  if (auto calls = msg->find("tool_calls"); calls != msg->end() && calls->is_array()) {
    for (const json& call : *calls) {
      if (!call.is_object()) continue;
      ToolCall tc;
      if (auto id = call.find("id"); id != call.end()) tc.id = TextOf(*id);
      auto fn = call.find("function");
      if (fn == call.end() || !fn->is_object() || !fn->contains("name")) {
        return Status::DataLoss("tool call without function.name; " + Abbreviate(call.dump()));
      }
      tc.name = TextOf((*fn)["name"]);
      if (auto a = fn->find("arguments"); a != fn->end()) tc.arguments = TextOf(*a);
      r.message.tool_calls.push_back(std::move(tc));
    }
  }
  if (auto f = choice.find("finish_reason"); f != choice.end()) r.finish_reason = TextOf(*f);
  if (auto u = j.find("usage"); u != j.end()) r.usage = ParseUsage(*u);
  if (auto m = j.find("model"); m != j.end()) r.model = TextOf(*m);
  return r;
}

json EmbeddingRequestToJson(std::span<const std::string> texts, std::string_view model) {
  return {{"model", std::string(model)},
          {"input", json(std::vector<std::string>(texts.begin(), texts.end()))}};
}

Result<std::vector<Embedding>> ParseEmbeddingResponse(std::string_view body,
                                                      size_t expected_count) {
  SM_ASSIGN_OR_RETURN(json j, ParseJson(body, "embeddings answer"));
  auto data = j.is_object() ? j.find("data") : j.end();
  if (!j.is_object() || data == j.end() || !data->is_array()) {
    return Status::DataLoss("embeddings answer has no data array; " + Abbreviate(body));
  }
  if (data->size() != expected_count) {
    return Status::DataLoss(fmt::format("embeddings answer has {} vectors for {} inputs",
                                        data->size(), expected_count));
  }
  std::vector<Embedding> out(expected_count);
  std::vector<bool> seen(expected_count, false);
  for (size_t i = 0; i < data->size(); ++i) {
    const json& item = (*data)[i];
    size_t index = i;
    if (item.is_object() && item.contains("index") && item["index"].is_number_unsigned()) {
      index = item["index"].get<size_t>();
    }
    if (index >= expected_count || seen[index]) {
      return Status::DataLoss(fmt::format("embeddings answer: bad or repeated index {}", index));
    }
    seen[index] = true;
    auto emb = item.is_object() ? item.find("embedding") : item.end();
    if (!item.is_object() || emb == item.end() || !emb->is_array()) {
      return Status::DataLoss(fmt::format("embeddings answer: data[{}] has no embedding", i));
    }
    Embedding v;
    v.reserve(emb->size());
    for (const json& x : *emb) {
      if (!x.is_number()) {
        return Status::DataLoss(fmt::format("embeddings answer: data[{}] has a non-number", i));
      }
      v.push_back(x.get<float>());
    }
    out[index] = std::move(v);
  }
  for (size_t i = 1; i < out.size(); ++i) {
    if (out[i].size() != out[0].size()) {
      return Status::DataLoss(fmt::format("embeddings answer: vectors of lengths {} and {}",
                                          out[0].size(), out[i].size()));
    }
  }
  return out;
}

Status HttpErrorToStatus(int http_status, std::string_view body, std::string_view where) {
  std::string detail;
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded() && j.is_object() && j.contains("error")) {
    const json& e = j["error"];
    detail = e.is_object() && e.contains("message") ? TextOf(e["message"]) : TextOf(e);
  } else {
    detail = std::string(Trim(body));
  }
  std::string msg = fmt::format("HTTP {}; {}", http_status, where);
  if (!detail.empty()) msg += ": " + Abbreviate(detail);
  switch (http_status) {
    case 400:
    case 422:
      return Status::InvalidArgument(std::move(msg));
    case 401:
    case 403:
      return Status::FailedPrecondition(std::move(msg) + " (check the API key)");
    case 404:
      return Status::NotFound(std::move(msg));
    case 408:
    case 409:
    case 429:
      return Status::Unavailable(std::move(msg));
    default:
      if (http_status >= 500) return Status::Unavailable(std::move(msg));
      return Status::InvalidArgument(std::move(msg));
  }
}

std::string EndpointUrl(std::string_view base_url, std::string_view endpoint) {
  std::string base(Trim(base_url));
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (!EndsWith(base, "/v1")) base += "/v1";
  return base + "/" + std::string(endpoint);
}

std::vector<std::string> SseParser::Feed(std::string_view bytes) {
  std::vector<std::string> out;
  buffer_.append(bytes);
  size_t start = 0;
  while (true) {
    size_t nl = buffer_.find('\n', start);
    if (nl == std::string::npos) break;
    std::string_view line(buffer_.data() + start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    TakeLine(line, out);
    start = nl + 1;
  }
  buffer_.erase(0, start);
  return out;
}

std::optional<std::string> SseParser::Finish() {
  std::vector<std::string> out;
  if (!buffer_.empty()) {
    std::string rest = std::move(buffer_);
    buffer_.clear();
    if (!rest.empty() && rest.back() == '\r') rest.pop_back();
    TakeLine(rest, out);
  }
  TakeLine("", out);
  if (out.empty()) return std::nullopt;
  return out.back();
}

void SseParser::TakeLine(std::string_view line, std::vector<std::string>& out) {
  if (line.empty()) {  // blank line: dispatch the event
    if (has_data_) out.push_back(std::move(data_));
    data_.clear();
    has_data_ = false;
    return;
  }
  if (line.front() == ':') return;  // comment / keep-alive
  size_t colon = line.find(':');
  std::string_view field = line.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field != "data") return;  // event, id, retry: not used by chat completions
  if (has_data_) data_ += '\n';
  data_.append(value);
  has_data_ = true;
}

Result<std::string> StreamAccumulator::Add(std::string_view data) {
  if (Trim(data) == "[DONE]") {
    done_ = true;
    return std::string();
  }
  SM_ASSIGN_OR_RETURN(json j, ParseJson(data, "stream chunk"));
  if (!j.is_object()) return Status::DataLoss("stream chunk is not an object; " + Abbreviate(data));
  if (j.contains("error")) return HttpErrorToStatus(500, data, "stream");
  if (auto m = j.find("model"); m != j.end()) response_.model = TextOf(*m);
  if (auto u = j.find("usage"); u != j.end() && u->is_object()) response_.usage = ParseUsage(*u);
  std::string piece;
  auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty()) return piece;
  const json& choice = (*choices)[0];
  if (!choice.is_object()) return Status::DataLoss("stream chunk choice is not an object");
  if (auto f = choice.find("finish_reason"); f != choice.end() && !f->is_null()) {
    response_.finish_reason = TextOf(*f);
  }
  auto delta = choice.find("delta");
  if (delta == choice.end() || !delta->is_object()) return piece;
  response_.message.role = Role::kAssistant;
  if (auto c = delta->find("content"); c != delta->end()) {
    piece = TextOf(*c);
    response_.message.content += piece;
  }
  if (auto calls = delta->find("tool_calls"); calls != delta->end() && calls->is_array()) {
    auto& out = response_.message.tool_calls;
    for (const json& call : *calls) {
      if (!call.is_object()) continue;
      size_t index = out.size();
      if (auto i = call.find("index"); i != call.end() && i->is_number_unsigned()) {
        index = i->get<size_t>();
      } else if (!call.contains("id") && !out.empty()) {
        index = out.size() - 1;  // a continuation piece without an index
      }
      if (index > out.size() + 16) return Status::DataLoss("stream tool call index out of range");
      if (index >= out.size()) out.resize(index + 1);
      ToolCall& tc = out[index];
      if (auto id = call.find("id"); id != call.end() && !id->is_null()) tc.id = TextOf(*id);
      if (auto fn = call.find("function"); fn != call.end() && fn->is_object()) {
        if (auto n = fn->find("name"); n != fn->end() && !n->is_null()) tc.name += TextOf(*n);
        if (auto a = fn->find("arguments"); a != fn->end() && !a->is_null()) {
          tc.arguments += TextOf(*a);
        }
      }
    }
  }
  return piece;
}

ChatResponse StreamAccumulator::Take() {
  response_.message.role = Role::kAssistant;
  return std::move(response_);
}

}  // namespace schedmate::llm
