#pragma once
// Engine selection for components that have a built-in engine and an LLM engine (advisor's
// metadata extraction, tracker's line classification, failure diagnosis), and the one
// user-facing wording for the "engine" field, so every component prints the same form:
//   "builtin"                                       --engine builtin, or auto with no LLM set up
//   "llm (Qwen2.5-7B-Instruct)"                     the LLM answered
//   "builtin (llm unavailable: timeout after 20 s)" the LLM was wanted but failed; fell back
//
// Rule for --engine:
//   builtin  never call the model.
//   auto     use the LLM when it is configured AND a quick health probe (LlmSetup::Probe)
//            succeeds; otherwise builtin (with the reason when it was configured).
//   llm      use the LLM without probing; when it is not configured or a call fails, still fall
//            back to builtin, and say so (engine field + a warning on stderr).

#include <functional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace schedmate::llm {

class LlmSetup;

enum class EngineChoice { kBuiltin, kLlm, kAuto };

// "builtin" | "llm" | "auto" (case-insensitive); kInvalidArgument naming the flag otherwise.
Result<EngineChoice> ParseEngineChoice(std::string_view text);
std::string_view EngineChoiceName(EngineChoice choice);

struct EngineDecision {
  bool use_llm = false;
  std::string engine;  // the "engine" field for when the decision holds (see above)
  std::string notice;  // non-empty: a warning for stderr ("schedmate: warning: ...")
};

// Decides per the rule above. `setup` may be null (treated as not configured). May block for up
// to the probe timeout under kAuto.
EngineDecision DecideEngine(EngineChoice choice, LlmSetup* setup);

// "llm (MODEL)".
std::string LlmEngineLabel(std::string_view model);

// "<builtin_name> (llm unavailable: <short cause>)" for an LLM failure (`llm_error` not OK):
// unavailable/timeouts/budget/configuration; "<builtin_name> (llm answer rejected: <cause>)"
// for malformed or schema-violating answers.
std::string FallbackReason(const Status& llm_error, std::string_view builtin_name = "builtin");

// The stderr warning for a fallback: "schedmate: warning: <what>: the LLM failed (<full message>);
// using the built-in engine".
std::string FallbackNotice(std::string_view what, const Status& llm_error);

// The result of running a component's engine: the value, the "engine" field, and a stderr
// warning (empty when none is due).
template <typename T>
struct EngineRun {
  T value;
  std::string engine;
  std::string notice;
};

// The whole rule in one call, so wiring a component is a prompt + schema + mapping:
//   auto d = DecideEngine(choice, setup);
//   EngineRun<Metadata> run = RunEngine<Metadata>(
//       d, [&] { return ExtractWithLlm(setup->chat(), job); },   // Result<Metadata>
//       [&] { return ExtractBuiltin(job); }, "advise");            // Metadata
//   json["engine"] = run.engine;  if (!run.notice.empty()) std::cerr << run.notice << "\n";
// Calls `llm` when the decision says so; on its failure (or when the decision is builtin) calls
// `builtin`. `what` names the command in the warning.
template <typename T>
EngineRun<T> RunEngine(const EngineDecision& decision, const std::function<Result<T>()>& llm,
                       const std::function<T()>& builtin, std::string_view what,
                       std::string_view llm_engine_label = {},
                       std::string_view builtin_name = "builtin") {
  if (decision.use_llm) {
    Result<T> r = llm();
    if (r.ok()) {
      return {std::move(r).value(),
              llm_engine_label.empty() ? decision.engine : std::string(llm_engine_label), ""};
    }
    return {builtin(), FallbackReason(r.status(), builtin_name), FallbackNotice(what, r.status())};
  }
  std::string engine = decision.engine;
  if (builtin_name != "builtin" && engine.rfind("builtin", 0) == 0) {
    engine = std::string(builtin_name) + engine.substr(7);
  }
  return {builtin(), std::move(engine), decision.notice};
}

}  // namespace schedmate::llm
