#include "llm/llm_check.h"

#include <chrono>

#include "core/strings.h"
#include "fmt/format.h"
#include "llm/complete_json.h"
#include "llm/json_schema.h"
#include "llm/llm_status.h"

namespace schedmate::llm {
namespace {

using nlohmann::json;

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string Excerpt(std::string_view s, size_t max = 40) {
  std::string out(Utf8Prefix(Trim(s), max));
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return Trim(s).size() > max ? out + "..." : out;
}

CheckItem Fail(std::string name, double ms, const Status& s) {
  return {std::move(name), "fail", ms, s.message()};
}

ChatRequest PingRequest() {
  ChatRequest r;
  r.messages = {ChatMessage::System("You are a connectivity check. Answer briefly."),
                ChatMessage::User("Reply with the single word: pong")};
  r.max_tokens = 16;
  r.temperature = 0.0;
  r.seed = 7;
  return r;
}

CheckItem CheckChat(ChatClient& chat, Status& status_out) {
  auto t0 = std::chrono::steady_clock::now();
  Result<ChatResponse> r = chat.Complete(PingRequest());
  const double ms = MsSince(t0);
  if (!r.ok()) {
    status_out = r.status();
    return Fail("chat", ms, r.status());
  }
  if (Trim(r->message.content).empty() && r->message.tool_calls.empty()) {
    status_out = Status::DataLoss("empty answer");
    return {"chat", "fail", ms, "the server answered with no text"};
  }
  status_out = Status::Ok();
  return {"chat", "ok", ms,
          fmt::format("\"{}\" ({} prompt + {} completion tokens, finish {}{})",
                      Excerpt(r->message.content), r->usage.prompt_tokens,
                      r->usage.completion_tokens, r->finish_reason.empty() ? "?" : r->finish_reason,
                      r->model.empty() ? "" : ", model " + r->model)};
}

CheckItem CheckStream(ChatClient& chat) {
  auto t0 = std::chrono::steady_clock::now();
  int deltas = 0;
  double first_ms = -1;
  Result<ChatResponse> r = chat.CompleteStream(PingRequest(), [&](const StreamDelta&) {
    if (deltas++ == 0) first_ms = MsSince(t0);
    return true;
  });
  const double ms = MsSince(t0);
  if (!r.ok()) return Fail("stream", ms, r.status());
  if (deltas == 0) return {"stream", "fail", ms, "the stream carried no content"};
  return {"stream", "ok", ms,
          fmt::format("{} deltas, first after {:.0f} ms: \"{}\"", deltas, first_ms,
                      Excerpt(r->message.content))};
}

CheckItem CheckTools(ChatClient& chat) {
  const json params = {{"type", "object"},
                       {"properties", {{"timezone", {{"type", "string"}}}}},
                       {"required", {"timezone"}}};
  ChatRequest r;
  r.messages = {ChatMessage::System("You can call functions. Use them when asked."),
                ChatMessage::User("Call the get_cluster_time function with timezone \"UTC\".")};
  r.tools = {ToolSpec{"get_cluster_time", "Current time on the cluster in a timezone.", params}};
  r.max_tokens = 64;
  r.temperature = 0.0;
  r.seed = 7;
  auto t0 = std::chrono::steady_clock::now();
  Result<ChatResponse> resp = chat.Complete(r);
  const double ms = MsSince(t0);
  if (!resp.ok()) return Fail("tool_calls", ms, resp.status());
  if (resp->message.tool_calls.empty()) {
    return {"tool_calls", "fail", ms,
            "answered in text, no tool call (vLLM needs --enable-auto-tool-choice "
            "--tool-call-parser, llama-server --jinja): \"" +
                Excerpt(resp->message.content) + "\""};
  }
  const ToolCall& call = resp->message.tool_calls[0];
  if (call.name != "get_cluster_time") {
    return {"tool_calls", "fail", ms, "called an unknown function '" + call.name + "'"};
  }
  json args = json::parse(call.arguments, nullptr, /*allow_exceptions=*/false);
  if (args.is_discarded()) {
    return {"tool_calls", "fail", ms, "arguments are not JSON: " + Excerpt(call.arguments)};
  }
  if (Status s = ValidateJson(args, params); !s.ok()) {
    return {"tool_calls", "fail", ms, s.message()};
  }
  return {"tool_calls", "ok", ms, "get_cluster_time(" + Excerpt(args.dump(), 60) + ")"};
}

CheckItem CheckJsonSchema(ChatClient& chat) {
  const json schema = {{"type", "object"},
                       {"properties",
                        {{"status", {{"type", "string"}, {"enum", {"ok", "degraded"}}}},
                         {"gpus", {{"type", "integer"}, {"minimum", 0}}}}},
                       {"required", {"status", "gpus"}},
                       {"additionalProperties", false}};
  JsonCallOptions opts;
  opts.schema_name = "health";
  opts.max_tokens = 64;
  opts.seed = 7;
  opts.repair_attempts = 0;
  auto t0 = std::chrono::steady_clock::now();
  Result<JsonAnswer> r =
      CompleteJsonDetailed(chat,
                           {ChatMessage::System("Answer with JSON only."),
                            ChatMessage::User("Report status \"ok\" and gpus 8 as a JSON object.")},
                           schema, opts);
  const double ms = MsSince(t0);
  if (!r.ok()) return Fail("json_schema", ms, r.status());
  return {"json_schema", "ok", ms, "valid: " + Excerpt(r->value.dump(), 60)};
}

CheckItem CheckEmbeddings(LlmSetup& setup) {
  if (!setup.embeddings_configured()) {
    return {"embeddings", "skip", 0,
            "not configured (SCHEDMATE_EMBED_MODEL or embeddings: in the config)"};
  }
  const std::vector<std::string> texts = {"NCCL timeout on rank 3", "epoch 2 loss=0.41"};
  auto t0 = std::chrono::steady_clock::now();
  Result<std::vector<Embedding>> r = setup.embedder().Embed(texts);
  const double ms = MsSince(t0);
  if (!r.ok()) return Fail("embeddings", ms, r.status());
  return {"embeddings", "ok", ms,
          fmt::format("{} vectors of dimension {}", r->size(), r->empty() ? 0 : (*r)[0].size())};
}

}  // namespace

bool LlmCheckReport::all_ok() const {
  for (const CheckItem& i : items) {
    if (i.outcome == "fail") return false;
  }
  return chat_status.ok();
}

LlmCheckReport RunLlmCheck(LlmSetup& setup) {
  LlmCheckReport report;
  const LlmConfig& c = setup.config();
  report.config_source = c.source;
  report.chat_url = c.chat.base_url;
  report.chat_model = c.chat.model;
  report.embed_url = c.embeddings.base_url;
  report.embed_model = c.embeddings.model;
  ChatClient& chat = setup.direct_chat();
  report.items.push_back(CheckChat(chat, report.chat_status));
  if (report.chat_status.ok()) {
    report.items.push_back(CheckStream(chat));
    report.items.push_back(CheckTools(chat));
    report.items.push_back(CheckJsonSchema(chat));
  } else {
    for (const char* name : {"stream", "tool_calls", "json_schema"}) {
      report.items.push_back({name, "skip", 0, "chat failed"});
    }
  }
  report.items.push_back(CheckEmbeddings(setup));
  return report;
}

nlohmann::json LlmCheckReportToJson(const LlmCheckReport& report) {
  json items = json::array();
  for (const CheckItem& i : report.items) {
    items.push_back({{"check", i.name},
                     {"outcome", i.outcome},
                     {"latency_ms", std::round(i.latency_ms * 10) / 10},
                     {"detail", i.detail}});
  }
  json j = {{"config_source", report.config_source},
            {"chat", {{"base_url", report.chat_url}, {"model", report.chat_model}}},
            {"embeddings", {{"base_url", report.embed_url}, {"model", report.embed_model}}},
            {"reachable", report.chat_status.ok()},
            {"all_ok", report.all_ok()},
            {"checks", std::move(items)}};
  if (!report.chat_status.ok()) j["error"] = report.chat_status.message();
  return j;
}

std::string FormatLlmCheckTable(const LlmCheckReport& report) {
  std::string out;
  out += fmt::format("config:      {}\n", report.config_source);
  out += fmt::format("chat:        {} model {}\n", report.chat_url, report.chat_model);
  out += fmt::format("embeddings:  {}\n",
                     report.embed_url.empty()
                         ? std::string("not configured")
                         : fmt::format("{} model {}", report.embed_url, report.embed_model));
  out += fmt::format("\n{:<12} {:<7} {:>10}  {}\n", "check", "result", "latency", "detail");
  for (const CheckItem& i : report.items) {
    const std::string latency =
        i.outcome == "skip" ? std::string("-") : fmt::format("{:.0f} ms", i.latency_ms);
    out += fmt::format("{:<12} {:<7} {:>10}  {}\n", i.name, i.outcome, latency, i.detail);
  }
  return out;
}

}  // namespace schedmate::llm
