#include "llm/agent.h"

#include <map>
#include <set>

#include "core/strings.h"
#include "fmt/format.h"
#include "llm/complete_json.h"
#include "llm/json_schema.h"
#include "llm/llm_status.h"

namespace schedmate::llm {
namespace {

using nlohmann::json;

// Runs one tool call and returns the text for the model; fills `rec`.
std::string RunOneCall(const ToolCall& call, const std::map<std::string, const AgentTool*>& by_name,
                       const AgentLimits& limits, AgentToolCallRecord& rec) {
  auto it = by_name.find(call.name);
  if (it == by_name.end()) {
    std::string names;
    for (const auto& [name, tool] : by_name) names += (names.empty() ? "" : ", ") + name;
    return fmt::format("error: unknown tool '{}'; available tools: {}", call.name, names);
  }
  json args = json::parse(
      call.arguments.empty() ? std::string_view("{}") : std::string_view(call.arguments), nullptr,
      /*allow_exceptions=*/false);
  if (args.is_discarded()) {
    return "error: the arguments are not valid JSON; send a JSON object matching the parameters";
  }
  if (Status s = ValidateJson(args, it->second->spec.parameters); !s.ok()) {
    return "error: bad arguments: " + s.message();
  }
  Result<std::string> out = it->second->run(args);
  if (!out.ok()) return "error: " + out.status().message();
  rec.ok = true;
  std::string text = std::move(out).value();
  rec.result_bytes = text.size();
  if (text.size() > limits.max_tool_bytes) {
    text.resize(Utf8Prefix(text, limits.max_tool_bytes).size());
    text += fmt::format("\n[truncated: first {} of {} bytes shown]", limits.max_tool_bytes,
                        rec.result_bytes);
    rec.truncated = true;
  }
  return text;
}

std::string ReactInstructions(std::span<const AgentTool> tools) {
  std::string out = "\n\nYou can use these tools:\n";
  for (const AgentTool& t : tools) {
    out += fmt::format("- {}: {} Arguments (JSON schema): {}\n", t.spec.name, t.spec.description,
                       t.spec.parameters.dump());
  }
  out +=
      "To use a tool, reply with exactly two lines and nothing after them:\n"
      "Action: <tool name>\n"
      "Action Input: <JSON object with the arguments>\n"
      "You will get the result as \"Observation: ...\". Use one tool per reply.\n"
      "When you know the answer, reply with:\n"
      "Final Answer: <your answer>";
  return out;
}

// Reads a ReAct reply: fills `call` when it asks for a tool, else returns the final answer text.
std::optional<std::string> ParseReactReply(const std::string& text, int step, ToolCall& call) {
  const size_t final_pos = text.find("Final Answer:");
  const size_t action_pos = text.find("Action:");
  if (action_pos != std::string::npos &&
      (final_pos == std::string::npos || action_pos < final_pos)) {
    size_t name_start = action_pos + 7;
    size_t name_end = text.find('\n', name_start);
    call.name = std::string(Trim(std::string_view(text).substr(
        name_start, name_end == std::string::npos ? std::string::npos : name_end - name_start)));
    call.id = fmt::format("react_{}", step);
    call.arguments = "{}";
    if (size_t in = text.find("Action Input:", action_pos); in != std::string::npos) {
      std::string_view rest = Trim(std::string_view(text).substr(in + 13));
      const size_t open = rest.find('{');
      const size_t close = rest.rfind('}');
      call.arguments =
          open != std::string_view::npos && close != std::string_view::npos && close > open
              ? std::string(rest.substr(open, close - open + 1))
              : std::string(rest);
    }
    return std::nullopt;
  }
  if (final_pos != std::string::npos) return std::string(Trim(text.substr(final_pos + 13)));
  return std::string(Trim(text));
}

}  // namespace

Result<AgentResult> RunAgent(ChatClient& client, std::string system, std::string user,
                             std::span<const AgentTool> tools, const AgentLimits& limits,
                             const AgentOptions& options) {
  std::map<std::string, const AgentTool*> by_name;
  ChatRequest request;
  for (const AgentTool& tool : tools) {
    if (!by_name.emplace(tool.spec.name, &tool).second) {
      return Status::InvalidArgument("duplicate agent tool '" + tool.spec.name + "'");
    }
    if (Status s = CheckSchemaSupported(tool.spec.parameters); !s.ok()) {
      return Status::InvalidArgument("tool '" + tool.spec.name + "': " + s.message());
    }
    if (!tool.run) return Status::InvalidArgument("tool '" + tool.spec.name + "' has no callback");
    if (options.protocol == AgentProtocol::kNativeTools) request.tools.push_back(tool.spec);
  }
  const bool react = options.protocol == AgentProtocol::kReactText;
  if (react) {
    system += ReactInstructions(tools);
    request.stop = {"Observation:"};
  }
  if (options.final_schema) SM_RETURN_IF_ERROR(CheckSchemaSupported(*options.final_schema));
  request.temperature = options.temperature;
  request.max_tokens = options.max_tokens;
  request.seed = options.seed;
  request.messages.push_back(ChatMessage::System(std::move(system)));
  request.messages.push_back(ChatMessage::User(std::move(user)));

  AgentResult result;
  std::map<std::string, int> repeats;
  size_t total_tool_bytes = 0;
  Status last_final_error;
  for (int step = 1; step <= limits.max_steps; ++step) {
    Result<ChatResponse> response = client.Complete(request);
    if (!response.ok()) {
      return WithDetail(response.status(), fmt::format("agent step {}", step));
    }
    result.steps = step;
    result.usage += response->usage;
    ChatMessage reply = std::move(response->message);
    reply.role = Role::kAssistant;
    ToolCall react_call;
    if (react) {
      std::optional<std::string> final_text = ParseReactReply(reply.content, step, react_call);
      request.messages.push_back(ChatMessage::Assistant(reply.content));
      reply = ChatMessage::Assistant(final_text.value_or(""));
      if (!final_text) reply.tool_calls = {react_call};
    }
    if (reply.tool_calls.empty()) {
      if (!react) request.messages.push_back(reply);
      if (!options.final_schema) {
        result.final_text = reply.content;
        result.transcript = std::move(request.messages);
        return result;
      }
      Result<json> parsed = ParseModelJson(reply.content, *options.final_schema);
      if (parsed.ok()) {
        result.final_text = reply.content;
        result.final_json = std::move(parsed).value();
        result.transcript = std::move(request.messages);
        return result;
      }
      last_final_error = parsed.status();
      request.messages.push_back(ChatMessage::User(
          "Your final answer was rejected: " + last_final_error.message() +
          "\nReply with only one JSON value that satisfies the required schema."));
      continue;
    }
    for (size_t i = 0; i < reply.tool_calls.size(); ++i) {
      if (reply.tool_calls[i].id.empty()) {
        reply.tool_calls[i].id = fmt::format("call_{}_{}", step, i);
      }
    }
    if (!react) request.messages.push_back(reply);
    for (const ToolCall& call : reply.tool_calls) {
      // Canonical arguments when they parse, so {"a":1} and { "a": 1 } count as the same call.
      json parsed = json::parse(call.arguments, nullptr, /*allow_exceptions=*/false);
      const std::string key =
          call.name + "\n" + (parsed.is_discarded() ? call.arguments : parsed.dump());
      if (++repeats[key] > limits.max_repeats) {
        return Status::ResourceExhausted(
            fmt::format("tool loop; the model called {}({}) {} times with the same arguments",
                        call.name, Utf8Prefix(call.arguments, 80), repeats[key]));
      }
      AgentToolCallRecord rec;
      rec.step = step;
      rec.name = call.name;
      rec.arguments = call.arguments;
      std::string text = RunOneCall(call, by_name, limits, rec);
      total_tool_bytes += text.size();
      result.tool_calls.push_back(rec);
      if (total_tool_bytes > limits.max_total_tool_bytes) {
        return Status::ResourceExhausted(
            fmt::format("tool output budget used up; {} bytes of tool results after step {} "
                        "(limit {})",
                        total_tool_bytes, step, limits.max_total_tool_bytes));
      }
      if (react) {
        request.messages.push_back(ChatMessage::User("Observation: " + text));
      } else {
        request.messages.push_back(ChatMessage::Tool(call.id, std::move(text)));
      }
    }
  }
  if (!last_final_error.ok()) {
    return Status::DataLoss(fmt::format("{}; no valid final answer within {} steps",
                                        last_final_error.message(), limits.max_steps));
  }
  return Status::ResourceExhausted(
      fmt::format("tool loop did not end; no final answer within {} steps ({} tool calls)",
                  limits.max_steps, result.tool_calls.size()));
}

}  // namespace schedmate::llm
