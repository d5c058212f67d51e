#include "llm/engine.h"

#include "core/strings.h"
#include "fmt/format.h"
#include "llm/llm_setup.h"
#include "llm/llm_status.h"

namespace schedmate::llm {

Result<EngineChoice> ParseEngineChoice(std::string_view text) {
  const std::string t = ToLower(Trim(text));
  if (t == "builtin") return EngineChoice::kBuiltin;
  if (t == "llm") return EngineChoice::kLlm;
  if (t == "auto") return EngineChoice::kAuto;
  return Status::InvalidArgument(
      fmt::format("--engine: expected builtin, llm or auto, got '{}'", text));
}

std::string_view EngineChoiceName(EngineChoice choice) {
  switch (choice) {
    case EngineChoice::kBuiltin:
      return "builtin";
    case EngineChoice::kLlm:
      return "llm";
    case EngineChoice::kAuto:
      return "auto";
  }
  return "builtin";
}

std::string LlmEngineLabel(std::string_view model) { return fmt::format("llm ({})", model); }

std::string FallbackReason(const Status& llm_error, std::string_view builtin_name) {
  if (llm_error.ok()) return std::string(builtin_name);
  const bool rejected =
      llm_error.code() == StatusCode::kDataLoss || llm_error.code() == StatusCode::kInvalidArgument;
  return fmt::format("{} (llm {}: {})", builtin_name, rejected ? "answer rejected" : "unavailable",
                     ShortCause(llm_error));
}

std::string FallbackNotice(std::string_view what, const Status& llm_error) {
  return fmt::format("schedmate: warning: {}: the LLM failed ({}); using the built-in engine", what,
                     llm_error.message());
}

EngineDecision DecideEngine(EngineChoice choice, LlmSetup* setup) {
  EngineDecision d;
  const bool configured = setup != nullptr && setup->chat_configured();
  switch (choice) {
    case EngineChoice::kBuiltin:
      d.engine = "builtin";
      return d;
    case EngineChoice::kAuto: {
      if (!configured) {
        d.engine = "builtin";
        return d;
      }
      Status probe = setup->Probe();
      if (probe.ok()) {
        d.use_llm = true;
        d.engine = LlmEngineLabel(setup->chat_model());
      } else {
        d.engine = FallbackReason(probe);
        d.notice = FallbackNotice("--engine auto", probe);
      }
      return d;
    }
    case EngineChoice::kLlm: {
      if (!configured) {
        const Status why = Status::Unavailable(
            setup != nullptr && setup->config().backend == "none"
                ? "disabled (backend: none)"
                : "not configured; set SCHEDMATE_LLM_BASE_URL and SCHEDMATE_LLM_MODEL or pass "
                  "--llm-config FILE");
        d.engine = FallbackReason(why);
        d.notice = FallbackNotice("--engine llm", why);
        return d;
      }
      d.use_llm = true;
      d.engine = LlmEngineLabel(setup->chat_model());
      return d;
    }
  }
  return d;
}

}  // namespace schedmate::llm
