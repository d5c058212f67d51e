#include "cli/engine_util.h"

#include <iostream>
#include <optional>

#include "cli/cli_util.h"
#include "cli/flags_util.h"
#include "core/strings.h"
#include "llm/engine.h"
#include "llm/llm_setup.h"

namespace schedmate::cli {

void AddEngineFlags(CLI::App* cmd, EngineFlags& flags, bool confidence_gate) {
  cmd->add_option("--engine", flags.engine,
                  confidence_gate
                      ? "builtin (default), llm (use the configured LLM, fall back to builtin on "
                        "any failure) or auto (the LLM only for answers the built-in engine is "
                        "unsure of, when it is configured and healthy)"
                      : "builtin (default), llm (use the configured LLM, fall back to builtin on "
                        "any failure) or auto (the LLM when it is configured and healthy)")
      ->check(CLI::IsMember({"builtin", "llm", "auto"}, CLI::ignore_case));
  if (!confidence_gate) {
    AddLlmConfigFlag(cmd, flags.llm_config);
    return;
  }
  cmd->add_option("--llm-below", flags.llm_below,
                  "with --engine auto, ask the LLM only for answers whose built-in confidence is "
                  "below this (0..1)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  AddLlmConfigFlag(cmd, flags.llm_config);
}

EngineContext::~EngineContext() = default;

std::unique_ptr<EngineContext> EngineContext::Resolve(const EngineFlags& flags) {
  Result<llm::EngineChoice> choice = llm::ParseEngineChoice(flags.engine);
  if (!choice.ok()) FailUsage(choice.status().message());
  std::unique_ptr<EngineContext> ctx(new EngineContext());
  ctx->llm_below_ = flags.llm_below;
  if (*choice == llm::EngineChoice::kBuiltin) return ctx;
  Result<std::unique_ptr<llm::LlmSetup>> setup = llm::LoadLlmSetup(
      flags.llm_config.empty() ? std::nullopt : std::optional<std::string>(flags.llm_config));
  if (!setup.ok()) Fail(setup.status());
  ctx->setup_ = std::move(setup).value();
  if (*choice == llm::EngineChoice::kAuto) {  // decided (and probed) when an answer needs it
    ctx->auto_ = true;
    ctx->decided_ = false;
    return ctx;
  }
  ctx->Decide(*choice);
  return ctx;
}

void EngineContext::Decide(llm::EngineChoice choice) {
  decided_ = true;
  llm::EngineDecision d = llm::DecideEngine(choice, setup_.get());
  use_llm_ = d.use_llm;
  engine_ = d.engine;
  if (!d.notice.empty()) std::cerr << d.notice << "\n";
}

bool EngineContext::use_llm() {
  if (!decided_) Decide(llm::EngineChoice::kAuto);
  return use_llm_;
}

bool EngineContext::Consult(double builtin_confidence) {
  if (auto_ && decided_ && !use_llm_) return false;  // probed and refused, or fell back
  if (auto_ && !(builtin_confidence < llm_below_)) return false;
  return use_llm();
}

std::string EngineContext::model() const {
  return setup_ != nullptr ? setup_->chat_model() : std::string();
}

const std::string& EngineContext::Fallback(const Status& llm_error, std::string_view what) {
  ++fallbacks_;
  use_llm_ = false;
  engine_ = llm::FallbackReason(llm_error);
  std::cerr << llm::FallbackNotice(what, llm_error) << "\n";
  return engine_;
}

}  // namespace schedmate::cli
