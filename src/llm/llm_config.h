#pragma once
// LlmConfig: where the chat and embedding models are and how to call them, read from a YAML file
// (--llm-config FILE, or $SCHEDMATE_LLM_CONFIG) and/or the environment:
//   SCHEDMATE_LLM_BASE_URL, SCHEDMATE_LLM_MODEL, SCHEDMATE_LLM_API_KEY, SCHEDMATE_LLM_API_KEY_FILE,
//   SCHEDMATE_EMBED_BASE_URL, SCHEDMATE_EMBED_MODEL (SCHEDMATE_EMBED_API_KEY optional).
// A value set in the file wins over the environment (the file was named on purpose); the
// environment fills what the file leaves out. config/llm.example.yaml documents every key.
// Nothing set at all: the LLM is "not configured" and the built-in engines are used.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/result.h"
#include "core/sim_time.h"

namespace schedmate::llm {

struct EndpointConfig {
  std::string base_url;  // empty: not configured
  std::string model;
  std::string api_key;         // resolved secret (never printed)
  std::string api_key_source;  // for display: "config", "env SCHEDMATE_LLM_API_KEY", "file PATH"
  Duration connect_timeout = Duration::Seconds(5);
  Duration timeout = Duration::Seconds(60);
  bool configured() const { return !base_url.empty(); }
};

struct LlmConfig {
  std::string backend = "openai-compatible";  // or "none": never call a model
  EndpointConfig chat;
  EndpointConfig embeddings;       // base_url defaults to chat's when only the model is given
  size_t embedding_dimension = 0;  // 0: learned from the first answer
  int max_retries = 2;
  int max_concurrency = 4;
  int64_t token_budget = 0;                       // 0: unlimited
  std::string cache_dir;                          // empty: no response cache
  std::string call_log;                           // empty: none; "stderr"; or a JSONL file path
  Duration probe_timeout = Duration::Seconds(5);  // --engine auto health probe
  uint64_t retry_seed = 1;                        // jitter Rng seed
  std::string source;  // "file PATH", "environment", "file PATH + environment", "none"

  bool chat_configured() const { return backend != "none" && chat.configured(); }
  bool embeddings_configured() const { return backend != "none" && embeddings.configured(); }
};

// Looks up an environment variable; tests pass their own.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
EnvLookup ProcessEnv();

// Parses YAML text (`path` names it in errors and anchors relative api_key_file paths).
// Unknown keys and bad values are kInvalidArgument "PATH:LINE: chat.timeout_s: ...".
Result<LlmConfig> ParseLlmConfigYaml(const std::string& text, const std::string& path,
                                     const EnvLookup& env);

// The whole lookup: the file (`config_path`, else $SCHEDMATE_LLM_CONFIG, else none) then the
// environment, then validation (a base URL needs a model, URLs must be http(s)).
Result<LlmConfig> LoadLlmConfig(const std::optional<std::string>& config_path,
                                const EnvLookup& env = ProcessEnv());

}  // namespace schedmate::llm
