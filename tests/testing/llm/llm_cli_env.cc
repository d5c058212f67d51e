#include "testing/llm/llm_cli_env.h"

namespace schedmate::testing {

CommandResult RunSchedmateWithLlm(const LlmCliEnv& env, const std::string& args) {
  // env(1): every -u before the first assignment.
  std::string cmd =
      "env -u SCHEDMATE_LLM_CONFIG -u SCHEDMATE_LLM_API_KEY -u SCHEDMATE_LLM_API_KEY_FILE "
      "-u SCHEDMATE_EMBED_API_KEY ";
  if (env.chat_url.empty()) cmd += "-u SCHEDMATE_LLM_BASE_URL -u SCHEDMATE_LLM_MODEL ";
  if (env.embed_url.empty()) cmd += "-u SCHEDMATE_EMBED_BASE_URL -u SCHEDMATE_EMBED_MODEL ";
  if (!env.chat_url.empty()) {
    cmd += "SCHEDMATE_LLM_BASE_URL=" + ShellQuote(env.chat_url) +
           " SCHEDMATE_LLM_MODEL=scripted-model ";
  }
  if (!env.embed_url.empty()) {
    cmd += "SCHEDMATE_EMBED_BASE_URL=" + ShellQuote(env.embed_url) +
           " SCHEDMATE_EMBED_MODEL=" + ShellQuote(env.embed_model) + " ";
  }
  cmd += "SCHEDMATE_NO_PROGRESS=1 SCHEDMATE_HOME=" + ShellQuote(env.home) + " ";
  return RunShell(cmd + ShellQuote(SchedmateBinary()) + " " + args);
}

}  // namespace schedmate::testing
