#pragma once
// LlmMetricExtractor: the tracker's LLM engine, the SchedMate paper's two stages.
//
// Rationale. Sending a whole log to a model is slow and costly, and most lines are noise. So
// stage 1 is the built-in engine: the classifier (with record assembly, MetricTracker) keeps only
// training-progress lines. Stage 2 asks the model to read the metrics from those lines only, in
// batches of `batch_lines` per request, newest first, and stops as soon as a batch contains a
// training record: the answer of `logs metrics` is the LATEST record, so older lines are never
// sent (the request count is O(1) for a healthy log). A model that calls a line not training
// progress is believed (it may spot evaluation output the rules missed); a line number the batch
// did not contain is ignored and counted. The answer schema is LlmMetricAnswerSchema(); values
// are mapped into ProgressRecord (line, offset, format, run and rank stay the built-in's).
//
// The system prompt is config/prompts/tracker_metrics.txt (compiled in). Thread-safety: none.

#include <cstdint>
#include <deque>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>

#include "core/result.h"
#include "llm/chat_client.h"
#include "tracker/log_scan.h"
#include "tracker/progress_record.h"

namespace schedmate::tracker {

struct LlmMetricOptions {
  size_t batch_lines = 16;      // lines per request
  int max_requests = 6;         // then give up (kDataLoss: no training record found)
  size_t max_line_bytes = 600;  // each line is cut to this many bytes
  size_t max_candidates = 512;  // newest candidate records kept from the built-in pass
  int max_tokens = 2048;        // per answer
};

struct LlmMetricResult {
  std::optional<ProgressRecord> latest;
  int requests = 0;
  size_t lines_sent = 0;
  int ignored_entries = 0;  // answer entries naming lines that were not in the batch
};

// The JSON schema of one answer: {"records": [{line_no, training, step, ...}]}.
const nlohmann::json& LlmMetricAnswerSchema();

class LlmMetricExtractor {
 public:
  // `chat` must outlive the extractor.
  explicit LlmMetricExtractor(llm::ChatClient& chat, LlmMetricOptions options = {});

  // `candidates`: the built-in engine's training records, in line order (oldest first).
  // Errors: the chat client's; kDataLoss when an answer is malformed or violates the schema, or
  // when no training record was found within max_requests; kNotFound with no candidates.
  Result<LlmMetricResult> FindLatest(std::span<const ProgressRecord> candidates);

 private:
  llm::ChatClient& chat_;
  LlmMetricOptions options_;
};

// What `logs metrics --engine llm` runs: one built-in pass over the file (collecting the newest
// candidates; the reverse scan is not used), then FindLatest. `scan` always holds the built-in
// result (signals, stats); when the LLM succeeded its latest record replaces scan.latest.
// `llm_status` is the LLM's error (the caller falls back and says so).
struct LlmScanOutcome {
  ScanResult scan;
  std::optional<double> builtin_confidence;  // of the built-in engine's own latest record
  Status llm_status;
  int requests = 0;
};
// `sink`, if set, also receives every built-in training record in order (e.g. for a plot).
Result<LlmScanOutcome> ScanLogWithLlm(llm::ChatClient& chat, const std::string& path,
                                      const ScanOptions& options,
                                      const LlmMetricOptions& llm_options = {},
                                      const std::function<void(const ProgressRecord&)>& sink = {});

}  // namespace schedmate::tracker
