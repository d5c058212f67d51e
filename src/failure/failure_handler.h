#pragma once
// FailureHandler: the failure component's front door. Locates the root cause of a failed job's
// log (FirstErrorLocator over a LineJudge), classifies it (a FailureClassifier), and gathers what
// the recovery planner needs from the log: the nodes named near the failure and the latest
// checkpoint the job reported saving.
//
// Thread-safety: Diagnose() calls the judge, which need not be thread-safe; use one handler per
// thread or a thread-safe judge.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "failure/diagnosis.h"
#include "failure/example_store.h"
#include "failure/failure_classifier.h"
#include "failure/first_error_locator.h"
#include "failure/line_judge.h"
#include "failure/log_view.h"
#include "failure/rule_line_judge.h"
#include "failure/signature_classifier.h"
#include "failure/signature_set.h"

namespace schedmate::failure {

struct FailureHandlerOptions {
  LocatorOptions locator;
  ClassifierOptions classifier;
  size_t checkpoint_lookback_bytes = size_t{8} << 20;  // how far before the root to look
};

class FailureHandler {
 public:
  // `signatures` (compiled) and `examples` (may be null) must outlive the handler. `judge` and
  // `classifier` may be null: the built-in RuleLineJudge / SignatureClassifier over `signatures`
  // are used; otherwise they must outlive the handler.
  FailureHandler(const SignatureSet& signatures, const ExampleStore* examples,
                 FailureHandlerOptions options = {}, LineJudge* judge = nullptr,
                 FailureClassifier* classifier = nullptr);

  // A log without a failure report gives label kUnknown and no root cause (not an error).
  Result<Diagnosis> Diagnose(const LogView& log);

  // The example `--learn` stores for this log; kFailedPrecondition if the log shows no failure.
  Result<FailureExample> MakeExample(const LogView& log, FailureLabel label,
                                     const std::string& category);

 private:
  const SignatureSet& signatures_;
  std::unique_ptr<RuleLineJudge> builtin_judge_;
  LineJudge& judge_;
  std::unique_ptr<SignatureClassifier> builtin_classifier_;
  FailureClassifier& classifier_;
  FailureHandlerOptions options_;
};

// Node names in `lines` (NCCL "host:pid:tid [dev]" prefixes, Slurm "ON <node>", "srun: error:
// <node>:", "node=<name>", syslog "<host> kernel:"); sorted, unique, without "localhost".
std::vector<std::string> ExtractNodeNames(const std::vector<std::string>& lines);

// The checkpoint path of the last line before `before_offset` (within `lookback` bytes) that
// reports saving a checkpoint or model; nullopt if none.
std::optional<std::string> FindSavedCheckpoint(const LogView& log, size_t before_offset,
                                               size_t lookback);

// The newest checkpoint-looking file or directory (name contains "ckpt" or "checkpoint", or ends
// in .pt/.pth/.safetensors/.ckpt) under `dir`, two levels deep; newest mtime, ties by path.
// At most `max_entries` directory entries are looked at (a job directory may hold a dataset):
// the best of those. nullopt if none; kNotFound if `dir` is not a directory.
Result<std::optional<std::string>> FindLatestCheckpointInDir(const std::string& dir,
                                                             size_t max_entries = 100000);

}  // namespace schedmate::failure
