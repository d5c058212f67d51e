#pragma once
// Running the built `schedmate` binary against an OpenAI-compatible endpoint (usually a
// ScriptedChatServer), with every other LLM setting of the caller's environment removed so the
// test sees only what it sets.

#include <string>

#include "testing/test_util.h"

namespace schedmate::testing {

struct LlmCliEnv {
  std::string chat_url;   // SCHEDMATE_LLM_BASE_URL (model "scripted-model"); empty: unset
  std::string embed_url;  // SCHEDMATE_EMBED_BASE_URL; empty: unset
  std::string embed_model = "scripted-embed";        // SCHEDMATE_EMBED_MODEL when embed_url is set
  std::string home = "/nonexistent-schedmate-home";  // SCHEDMATE_HOME
};

// `schedmate ARGS` (ARGS already shell-quoted where needed) under `env`; SCHEDMATE_NO_PROGRESS=1.
CommandResult RunSchedmateWithLlm(const LlmCliEnv& env, const std::string& args);

// The common case: chat at `base_url` (empty: nothing configured).
inline CommandResult RunSchedmateWithLlm(const std::string& base_url, const std::string& args) {
  return RunSchedmateWithLlm(LlmCliEnv{.chat_url = base_url}, args);
}

}  // namespace schedmate::testing
