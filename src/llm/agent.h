#pragma once
// RunAgent: a bounded tool-calling loop (the ReAct pattern over native OpenAI tool calls).
//
// Rationale: some questions (what does this job's training script do?) need the model to look
// around first — e.g. the advisor registers `file_tree` and `file_read`. The loop is:
// ask the model; if it calls tools, run each call's C++ callback and send the results back; stop
// when it answers without tool calls. Everything is bounded, because a small model can loop
// forever: `max_steps` model calls, `max_tool_bytes` per tool result (longer results are cut and
// say so), `max_total_tool_bytes` over the run, and the same call (name + arguments) at most
// `max_repeats` times. Bad calls (unknown tool, malformed or schema-violating arguments, a failing
// callback) are answered with an "error: ..." tool result, so the model can correct itself;
// running out of a bound is an error (kResourceExhausted) for the caller.
// With `final_schema` set, the final answer must be JSON satisfying it (validated as in
// CompleteJson; a bad final answer gets one correction turn within max_steps).
//
// Two protocols: kNativeTools sends `tools` and reads `tool_calls` (vLLM with a tool-call parser,
// llama-server --jinja, Ollama). kReactText is for servers that cannot emit tool calls: the tools
// are described in the system prompt, the model writes "Action: <name>" and
// "Action Input: <JSON>" (or "Final Answer: <text>"), results go back as "Observation: ..."
// user messages, and "Observation:" is a stop sequence so the model cannot invent results.
// A ReAct reply with neither an action nor "Final Answer:" is taken as the final answer.

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "llm/chat_client.h"

namespace schedmate::llm {

struct AgentTool {
  ToolSpec spec;  // name, description, JSON schema of the arguments object
  // Runs one call with validated arguments; its text (or "error: <message>") goes to the model.
  // Called on the RunAgent thread, in the order the model asked.
  std::function<Result<std::string>(const nlohmann::json& arguments)> run;
};

struct AgentLimits {
  int max_steps = 8;                  // model calls
  size_t max_tool_bytes = 16 * 1024;  // per tool result
  size_t max_total_tool_bytes = 128 * 1024;
  int max_repeats = 2;  // identical calls allowed
};

enum class AgentProtocol { kNativeTools, kReactText };

struct AgentOptions {
  AgentProtocol protocol = AgentProtocol::kNativeTools;
  std::optional<double> temperature = 0.0;
  std::optional<int> max_tokens = 1024;
  std::optional<int64_t> seed;
  std::optional<nlohmann::json> final_schema;
};

struct AgentToolCallRecord {
  int step = 0;  // 1-based model call that asked for it
  std::string name;
  std::string arguments;    // as the model sent them
  bool ok = false;          // the callback ran and succeeded
  size_t result_bytes = 0;  // before truncation
  bool truncated = false;
};

struct AgentResult {
  std::string final_text;
  std::optional<nlohmann::json> final_json;  // set when final_schema was given
  int steps = 0;
  std::vector<AgentToolCallRecord> tool_calls;
  TokenUsage usage;
  std::vector<ChatMessage> transcript;  // everything sent and received, in order
};

// kInvalidArgument for bad tools (duplicate names, unsupported schemas); the client's error when
// a model call fails ("; agent step N" appended); kResourceExhausted when a bound is hit;
// kDataLoss when the final answer is not valid JSON for final_schema.
Result<AgentResult> RunAgent(ChatClient& client, std::string system, std::string user,
                             std::span<const AgentTool> tools, const AgentLimits& limits = {},
                             const AgentOptions& options = {});

}  // namespace schedmate::llm
