#pragma once
// Shared --engine / --llm-config handling for the commands that have a built-in and an LLM
// engine (advise, logs metrics, diagnose).
//
//   --engine builtin|llm|auto   (default builtin) builtin never asks the model; llm asks it for
//                               every answer without probing; auto asks it only for the answers
//                               the built-in engine is unsure of (confidence below --llm-below),
//                               after a quick probe made the first time an answer needs it. Both
//                               fall back to the built-in engine on any failure.
//   --llm-below CONF            (default 0.8) the confidence under which --engine auto asks the
//   LLM.
//   --llm-config FILE           the LLM configuration (else $SCHEDMATE_LLM_CONFIG, else the
//                               SCHEDMATE_LLM_* environment variables; config/llm.example.yaml).
//
// Every JSON output then carries "engine": "builtin", "llm (MODEL)", or
// "builtin (llm unavailable: timeout after 20 s)" / "builtin (llm answer rejected: ...)" after a
// fallback (a warning on stderr says the same).

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace schedmate::llm {
class LlmSetup;
enum class EngineChoice;
}  // namespace schedmate::llm

namespace schedmate::cli {

struct EngineFlags {
  std::string engine = "builtin";
  std::string llm_config;
  double llm_below = 0.8;  // --engine auto: ask the LLM for answers below this confidence
};

// Adds --engine and --llm-config to `cmd`, bound to `flags` (which must outlive `cmd`), and
// --llm-below when the command's answers have a confidence to gate on (`confidence_gate`).
void AddEngineFlags(CLI::App* cmd, EngineFlags& flags, bool confidence_gate = true);

// The engine decision for one command run.
class EngineContext {
 public:
  // Parses the flags (FailUsage on a bad --engine), loads the configuration (Fail on a bad
  // --llm-config file) and decides; prints the decision's warning, if any, on stderr.
  static std::unique_ptr<EngineContext> Resolve(const EngineFlags& flags);
  ~EngineContext();

  // Whether the LLM is to be used for an answer whose built-in confidence is unknown: llm, and
  // auto once it decided (the first call under auto probes the server).
  bool use_llm();
  // Whether to ask the LLM for an answer the built-in engine gave with `builtin_confidence`
  // (0..1): builtin never; llm always (while usable); auto only below --llm-below, probing the
  // server the first time. Never true after a Fallback().
  bool Consult(double builtin_confidence);
  bool is_auto() const { return auto_; }
  double llm_below() const { return llm_below_; }
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
  void Decide(llm::EngineChoice choice);
  std::shared_ptr<llm::LlmSetup> setup_;
  bool use_llm_ = false;
  bool auto_ = false;
  bool decided_ = true;  // false: auto has not probed yet
  double llm_below_ = 0.8;
  std::string engine_ = "builtin";
  int fallbacks_ = 0;
};

}  // namespace schedmate::cli
