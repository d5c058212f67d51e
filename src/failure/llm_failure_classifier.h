#pragma once
// The failure handler's LLM engines: LlmFailureClassifier (infrastructure vs application from the
// located failure report) and LlmLineJudge (the LLM as the bisection's line classifier).
//
// Rationale. The locator already narrows a log of any size to its failure report in O(log n)
// questions, so the model only ever sees a small window: the root-cause line with up to
// `context_before` / `context_after` lines around it (from the log when one is given) plus the
// report's wrapper and cascade lines, numbered, within `max_prompt_bytes`. The answer must satisfy
// FailureAnswerSchema() {label, category, confidence, root_cause_line, evidence}; evidence and the
// root-cause line must cite line numbers that were shown (others are dropped and counted), so
// the model cannot invent lines. The model's root-cause line leads the evidence (source
// "llm:root") when it differs from the locator's. Below `unknown_below` the label is unknown.
//
// LlmLineJudge answers the locator's two questions with the model: the role of every line of a
// small chunk ({"roles": [...]}, exactly one per line) and whether a chunk holds a failure. A
// chunk larger than `max_prompt_bytes` is not sent whole: the `prefilter` judge (the built-in
// RuleLineJudge) answers for it, so the model's calls stay O(log n) and bounded in size. Calls
// are counted (calls(), prefilter_calls()).
//
// Prompts: config/prompts/failure_classify.txt and failure_line_judge.txt (compiled in).
// Thread-safety: Classify() is const and safe if the chat client is; the judge is not.

#include <atomic>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "failure/failure_classifier.h"
#include "failure/failure_handler.h"
#include "failure/line_judge.h"
#include "failure/log_view.h"
#include "llm/chat_client.h"

namespace schedmate::failure {

struct LlmFailureOptions {
  int context_before = 20;
  int context_after = 40;
  size_t max_prompt_bytes = 12 * 1024;
  size_t max_line_bytes = 400;
  double unknown_below = 0.3;
  int max_tokens = 1024;
};

const nlohmann::json& FailureAnswerSchema();

class LlmFailureClassifier final : public FailureClassifier {
 public:
  // `chat` (and `log`, when given: the log the report comes from) must outlive the classifier.
  // `model` names the engine: Name() is "llm:<model>".
  LlmFailureClassifier(llm::ChatClient& chat, std::string model, const LogView* log = nullptr,
                       LlmFailureOptions options = {});
  std::string_view Name() const override { return name_; }
  // Errors: the chat client's; kDataLoss for malformed or schema-violating answers.
  Result<Classification> Classify(const FailureReport& report) const override;

  int calls() const { return calls_.load(); }
  int dropped_citations() const { return dropped_.load(); }

 private:
  llm::ChatClient& chat_;
  std::string name_;
  const LogView* log_;
  LlmFailureOptions options_;
  mutable std::atomic<int> calls_{0};
  mutable std::atomic<int> dropped_{0};
};

class LlmLineJudge final : public LineJudge {
 public:
  // `chat` and `prefilter` must outlive the judge.
  LlmLineJudge(llm::ChatClient& chat, std::string model, LineJudge& prefilter,
               LlmFailureOptions options = {});
  std::string_view Name() const override { return name_; }
  Result<bool> ContainsFailure(const LogChunk& chunk) override;
  Result<std::vector<LineRole>> ScoreLines(const LogChunk& chunk) override;
  size_t MaxScoringBytes() const override { return options_.max_prompt_bytes; }

  int calls() const { return calls_; }
  int prefilter_calls() const { return prefilter_calls_; }

 private:
  llm::ChatClient& chat_;
  std::string name_;
  LineJudge& prefilter_;
  LlmFailureOptions options_;
  int calls_ = 0;
  int prefilter_calls_ = 0;
};

// What `diagnose --engine llm` runs: the locator over the built-in judge (or, with `llm_judge`,
// over LlmLineJudge with the built-in judge as prefilter), then LlmFailureClassifier on the
// located window. Any LLM error is returned (the caller falls back to the built-in handler);
// `llm_calls` receives the model calls made (also on error).
Result<Diagnosis> DiagnoseWithLlm(llm::ChatClient& chat, const std::string& model,
                                  const SignatureSet& signatures, const ExampleStore* examples,
                                  const FailureHandlerOptions& handler_options, const LogView& log,
                                  bool llm_judge = false, const LlmFailureOptions& options = {},
                                  int* llm_calls = nullptr);

// "none" | "benign" | "trace" | "wrapper" | "weak" | "origin" -> LineRole; nullopt otherwise.
std::optional<LineRole> ParseLineRole(std::string_view name);

}  // namespace schedmate::failure
