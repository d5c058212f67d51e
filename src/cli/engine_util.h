#pragma once
// Shared --engine / --llm-config handling for the commands that have a built-in and an LLM
// engine (advise, logs metrics, diagnose).
//
//   --engine builtin|llm|auto   (default builtin) the rule of llm/engine.h: auto uses the LLM when
//                               it is configured and a quick probe succeeds; llm uses it without
//                               probing; both fall back to the built-in engine on any failure.
//   --llm-config FILE           the LLM configuration (else $SCHEDMATE_LLM_CONFIG, else the
//                               SCHEDMATE_LLM_* environment variables; config/llm.example.yaml).
//
// Every JSON output then carries "engine": "builtin", "llm (MODEL)", or
// "builtin (llm unavailable: timeout after 20 s)" / "builtin (llm answer rejected: ...)" after a
// fallback (a warning on stderr says the same). A build without the llm component accepts the
// flags and always answers "builtin" (with "llm support not built" when the LLM was asked for).

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace schedmate::llm {
class LlmSetup;
}  // namespace schedmate::llm

namespace schedmate::cli {

struct EngineFlags {
  std::string engine = "builtin";
  std::string llm_config;
};

// Adds --engine and --llm-config to `cmd`, bound to `flags` (which must outlive `cmd`).
void AddEngineFlags(CLI::App* cmd, EngineFlags& flags);

// The engine decision for one command run.
class EngineContext {
 public:
  // Parses the flags (FailUsage on a bad --engine), loads the configuration (Fail on a bad
  // --llm-config file) and decides; prints the decision's warning, if any, on stderr.
  static std::unique_ptr<EngineContext> Resolve(const EngineFlags& flags);
  ~EngineContext();

  bool use_llm() const { return use_llm_; }
  // The set-up LLM stack; non-null when use_llm().
  llm::LlmSetup* setup() const { return setup_.get(); }
  // The chat model's name ("" when not configured).
  std::string model() const;
  // The "engine" field as things stand.
  const std::string& engine() const { return engine_; }

  // Records an LLM failure of `what` (e.g. "advise"): the engine becomes the fallback reason and
  // the warning goes to stderr. Returns engine().
  const std::string& Fallback(const Status& llm_error, std::string_view what);
  // LLM failures recorded by Fallback() in this run.
  int fallbacks() const { return fallbacks_; }

 private:
  EngineContext() = default;
  // shared_ptr: its deleter is bound where the setup is created, so a build without the llm
  // component never needs the complete type.
  std::shared_ptr<llm::LlmSetup> setup_;
  bool use_llm_ = false;
  std::string engine_ = "builtin";
  int fallbacks_ = 0;
};

}  // namespace schedmate::cli
