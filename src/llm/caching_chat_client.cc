#include "llm/caching_chat_client.h"

#include <filesystem>
#include <system_error>

#include "core/file_util.h"
#include "core/json_dump.h"
#include "fmt/format.h"
#include "llm/openai_protocol.h"
#include "text/hash.h"

namespace schedmate::llm {
namespace {

using nlohmann::json;

json ResponseToJson(const ChatResponse& r) {
  json calls = json::array();
  for (const ToolCall& c : r.message.tool_calls) {
    calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
  }
  return {{"content", r.message.content},
          {"tool_calls", std::move(calls)},
          {"finish_reason", r.finish_reason},
          {"model", r.model},
          {"usage",
           {{"prompt_tokens", r.usage.prompt_tokens},
            {"completion_tokens", r.usage.completion_tokens},
            {"total_tokens", r.usage.total_tokens}}}};
}

std::optional<ChatResponse> ResponseFromJson(const json& j) {
  try {
    ChatResponse r;
    r.message.role = Role::kAssistant;
    r.message.content = j.at("content").get<std::string>();
    for (const json& c : j.at("tool_calls")) {
      r.message.tool_calls.push_back({c.at("id").get<std::string>(),
                                      c.at("name").get<std::string>(),
                                      c.at("arguments").get<std::string>()});
    }
    r.finish_reason = j.at("finish_reason").get<std::string>();
    r.model = j.at("model").get<std::string>();
    const json& u = j.at("usage");
    r.usage.prompt_tokens = u.at("prompt_tokens").get<int64_t>();
    r.usage.completion_tokens = u.at("completion_tokens").get<int64_t>();
    r.usage.total_tokens = u.at("total_tokens").get<int64_t>();
    return r;
  } catch (const json::exception&) {
    return std::nullopt;  // a damaged entry is a miss
  }
}

}  // namespace

std::string Fnv1a64Hex(std::string_view data) {
  return fmt::format("{:016x}", text::Fnv1a64(data));
}

CachingChatClient::CachingChatClient(ChatClient& target, std::string dir, std::string key_namespace)
    : ChatClientWrapper(target), dir_(std::move(dir)), key_namespace_(std::move(key_namespace)) {}

std::string CachingChatClient::Canonical(const ChatRequest& request) const {
  return DumpJson(ChatRequestToJson(request, /*default_model=*/"", /*stream=*/false));
}

std::string CachingChatClient::EntryPath(const ChatRequest& request) const {
  return dir_ + "/" + Fnv1a64Hex(key_namespace_ + "\n" + Canonical(request)) + ".json";
}

std::optional<ChatResponse> CachingChatClient::Lookup(const std::string& path,
                                                      const std::string& canonical) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  Result<std::string> text = ReadFileToString(path);
  if (!text.ok()) return std::nullopt;
  json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  if (j.value("namespace", "") != key_namespace_ || j.value("request", "") != canonical) {
    return std::nullopt;
  }
  if (!j.contains("response")) return std::nullopt;
  return ResponseFromJson(j["response"]);
}

void CachingChatClient::Store(const std::string& path, const std::string& canonical,
                              const ChatResponse& r) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  json entry = {
      {"namespace", key_namespace_}, {"request", canonical}, {"response", ResponseToJson(r)}};
  if (ec || !WriteStringToFile(path, DumpJson(entry, 1) + "\n").ok()) ++write_failures_;
}

Result<ChatResponse> CachingChatClient::Call(const ChatRequest& request,
                                             const StreamCallback* on_delta) {
  const std::string canonical = Canonical(request);
  const std::string path = EntryPath(request);
  if (auto hit = Lookup(path, canonical)) {
    ++hits_;
    if (on_delta != nullptr && *on_delta && !hit->message.content.empty() &&
        !(*on_delta)(StreamDelta{hit->message.content})) {
      return Status::Cancelled("stream stopped by caller; cached answer");
    }
    return *hit;
  }
  ++misses_;
  Result<ChatResponse> r = Forward(request, on_delta);
  if (r.ok()) Store(path, canonical, *r);
  return r;
}

}  // namespace schedmate::llm
