#pragma once
// LlmMetadataAgent: the LLM engine of the advisor's metadata extraction, a tool-calling (ReAct)
// agent that looks around the job directory and answers with the built-in extractor's schema.
//
// Rationale. The built-in extractor (builtin_extractor.h) parses what it knows — shell, launchers,
// argparse, YAML/JSON configs — and reports each value with file:line provenance, but it leaves
// gaps when a job hides settings in unusual code. The agent gets two read-only tools, `file_tree`
// and `file_read`, confined to the job directory (absolute paths, `..` and symlinks leaving the
// directory are refused), and is bounded in model calls, bytes per tool result and bytes over the
// run (llm::AgentLimits). Its final answer must be JSON satisfying MetadataAnswerSchema(); values
// are normalised (numeric strings become numbers, blanks are dropped).
//
// Merge rule (MergeMetadata): with Prefer::kBuiltin (the default) a built-in value with
// provenance (file:line or derived) wins on conflict and the LLM only fills gaps and overrides
// "default: ..." values; with Prefer::kLlm every non-null LLM value wins. Fields the LLM
// supplied have source "llm"; each disagreement is recorded in `notes`.
//
// The system prompt is config/prompts/advisor_metadata.txt (compiled in, see
// config/prompts/embed_prompts.cmake). Thread-safety: one Extract at a time per object.

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "advisor/job_metadata.h"
#include "advisor/metadata_extractor.h"
#include "core/result.h"
#include "llm/agent.h"
#include "llm/chat_client.h"

namespace schedmate::advisor {

enum class MergePreference { kBuiltin, kLlm };

// "builtin" | "llm"; kInvalidArgument otherwise.
Result<MergePreference> ParseMergePreference(std::string_view text);

struct LlmAgentOptions {
  llm::AgentLimits limits{/*max_steps=*/8, /*max_tool_bytes=*/16 * 1024,
                          /*max_total_tool_bytes=*/96 * 1024, /*max_repeats=*/2};
  llm::AgentProtocol protocol = llm::AgentProtocol::kNativeTools;
  size_t max_tree_entries = 300;       // file_tree lists at most this many entries
  int max_tree_depth = 4;              // and descends at most this deep
  size_t max_read_bytes = 256 * 1024;  // file_read refuses larger files beyond this prefix
  size_t max_read_lines = 400;         // lines per file_read call
  MergePreference prefer = MergePreference::kBuiltin;
};

// What the agent did, for output and tests.
struct LlmAgentStats {
  int steps = 0;
  int tool_calls = 0;
  int refused_paths = 0;                // tool calls asking for paths outside the job directory
  std::vector<std::string> files_read;  // relative paths the model read
  int64_t tokens = 0;
};

// The JSON schema of the final answer: an object with every kMetadataFields key (null allowed).
const nlohmann::json& MetadataAnswerSchema();

// The fields of a schema-valid answer as JobMetadata (sources "llm"), normalised.
JobMetadata MetadataFromAnswer(const nlohmann::json& answer);

// Merges per the rule above. The result keeps the built-in's entry, files and notes.
JobMetadata MergeMetadata(const JobMetadata& builtin, const JobMetadata& from_llm,
                          MergePreference prefer);

// Resolves `relative` inside `root` (both existing); kInvalidArgument when it leaves `root`
// (absolute path, "..", or a symlink pointing outside), kNotFound when it does not exist.
Result<std::string> ConfinedPath(const std::string& root, const std::string& relative);

class LlmMetadataAgent {
 public:
  // `chat` must outlive the agent.
  explicit LlmMetadataAgent(llm::ChatClient& chat, LlmAgentOptions options = {});

  // Runs the agent over the job (`builtin` is what the built-in extractor found; it is shown to
  // the model and merged with the answer). Errors: the chat client's (unavailable, timeout,
  // budget), kResourceExhausted (a bound: tool loop, output budget), kDataLoss (no valid final
  // answer), kNotFound (no job directory). The caller falls back to `builtin`.
  Result<JobMetadata> Extract(const JobSource& source, const JobMetadata& builtin);

  const LlmAgentStats& stats() const { return stats_; }

 private:
  std::vector<llm::AgentTool> Tools(const std::string& root);
  Result<std::string> FileTree(const std::string& root, const nlohmann::json& args);
  Result<std::string> FileRead(const std::string& root, const nlohmann::json& args);

  llm::ChatClient& chat_;
  LlmAgentOptions options_;
  LlmAgentStats stats_;
};

}  // namespace schedmate::advisor
