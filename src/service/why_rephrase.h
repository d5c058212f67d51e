#pragma once
// Rephrasing a why-answer (why.h) with an LLM, never with facts it was not given.
//
// The model sees only the structured answer (WhyFacts: the answer's JSON with times as UTC text)
// and is asked to restate the explanation in plain words. Its reply is then checked against
// those facts (FindUnsupported): every number, date, time of day and name-with-digits
// (node07, a100) in the reply must appear in the facts, and a known cluster name (a partition,
// node or user the caller lists) must not appear unless the facts name it. A reply that fails the
// check is rejected (kDataLoss "reply names facts not given: ...") and the built-in text stays.
//
// The check is deliberately conservative: a faithful reply that converts units ("125 min" ->
// "2 hours 5 minutes") or spells a number the facts do not hold is rejected too; the prompt asks
// the model to copy numbers as written.

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "llm/chat_client.h"

namespace schedmate::llm {
class LlmSetup;
}  // namespace schedmate::llm

namespace schedmate::service {

struct WhyRephraseOptions {
  // Partitions, nodes and users of the cluster: a reply naming one the facts do not name is
  // rejected (names without digits cannot be told from words otherwise).
  std::vector<std::string> known_names;
  int max_tokens = 400;
  size_t max_reply_bytes = 2000;  // a longer reply is rejected
};

// The facts given to the model: `answer` (WhyAnswerToJson's shape) with "at" and
// "expected_start" Unix seconds replaced by UTC text ("2026-11-27T13:05:00Z").
nlohmann::json WhyFacts(const nlohmann::json& answer);

// What in `reply` the facts do not support, in reply order without repeats (empty: faithful).
std::vector<std::string> FindUnsupported(std::string_view reply, const nlohmann::json& facts,
                                         const std::vector<std::string>& known_names = {});

// Asks `chat` to rephrase `answer`'s explanation and checks the reply. Errors: the chat client's
// own, kDataLoss for an empty, overlong or unfaithful reply.
Result<std::string> RephraseWhy(const nlohmann::json& answer, llm::ChatClient& chat,
                                const WhyRephraseOptions& options = {});

// Sets the outcome on `answer`: "explanation_source" is `source` ("builtin", "llm (MODEL)" or a
// fallback reason from llm::FallbackReason); with a rephrased text, "explanation" becomes it and
// the built-in text moves to "builtin_explanation".
void SetExplanation(nlohmann::json& answer, const std::optional<std::string>& rephrased,
                    const std::string& source);

// The service's use (GET /v1/jobs/{id}/why with llm.engine llm|auto): one model for every
// answer, and the outcome for each distinct answer remembered (the dashboard asks again every few
// seconds; an answer changes when the queue does), up to `cache_entries`, oldest dropped first.
// A rejected reply is remembered too, so a model that invents facts is not asked again for that
// answer; an unavailable or slow server is asked again next time.
// Thread-safe; the model call runs outside the lock.
class WhyRephraser {
 public:
  // `llm` is the decided LLM stack (non-null).
  explicit WhyRephraser(std::shared_ptr<llm::LlmSetup> llm, size_t cache_entries = 256);
  ~WhyRephraser();

  // Rephrases `answer` in place (SetExplanation): "explanation_source" is "llm (MODEL)" or the
  // fallback reason. `known_names` as in WhyRephraseOptions.
  void Apply(nlohmann::json& answer, const std::vector<std::string>& known_names);
  int64_t calls() const;  // model calls made

 private:
  struct Outcome {
    std::optional<std::string> text;
    std::string source;
  };
  std::shared_ptr<llm::LlmSetup> llm_;
  size_t cache_entries_;
  mutable std::mutex mu_;
  std::map<std::string, Outcome> cache_;  // by the facts given to the model
  std::deque<std::string> order_;         // insertion order, for eviction
  int64_t calls_ = 0;
};

}  // namespace schedmate::service
