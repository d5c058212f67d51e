#pragma once
// FakeCommandRunner: a CommandRunner that answers from canned outputs and records every call.
// Shipped (not test-only) so benchmarks and demos can drive the service without a cluster.
//
// Rules are matched by argv prefix, longest prefix first; a rule answers every matching call
// until replaced (SetOutput) or answers once per queued entry (QueueOutput, consumed in order,
// falling back to the SetOutput rule when empty). An unmatched command returns exit code 1 with
// "fake: no canned output for ..." on stderr. Thread-safe.

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "slurm/command_runner.h"

namespace schedmate::slurm {

class FakeCommandRunner final : public CommandRunner {
 public:
  // Every call whose argv starts with `prefix` gets `output` (exit code 0 unless given).
  void SetOutput(const std::vector<std::string>& prefix, std::string out, int exit_code = 0,
                 std::string err = "");
  // One-shot answer for the next matching call.
  void QueueOutput(const std::vector<std::string>& prefix, std::string out, int exit_code = 0,
                   std::string err = "");
  // Makes matching calls fail with `status` (e.g. Unavailable, DeadlineExceeded).
  void SetError(const std::vector<std::string>& prefix, Status status);

  Result<CommandOutput> Run(const std::vector<std::string>& argv, Duration timeout) override;

  // Every call so far, joined with spaces, in call order.
  std::vector<std::string> Calls() const;
  // Calls whose joined argv starts with `prefix` (e.g. "scontrol update").
  std::vector<std::string> CallsStartingWith(const std::string& prefix) const;
  void ClearCalls();

 private:
  struct Rule {
    CommandOutput output;
    Status error;
    bool has_fixed = false;
    std::vector<CommandOutput> queue;
  };
  static constexpr size_t kMaxCalls = 100000;  // older calls are dropped beyond this
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, Rule> rules_;
  std::vector<std::string> calls_;
};

}  // namespace schedmate::slurm
