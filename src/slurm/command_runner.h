#pragma once
// CommandRunner: the one seam through which schedmate runs Slurm's command-line tools (squeue,
// sinfo, scontrol, sacct). Production uses SubprocessCommandRunner; unit tests use
// FakeCommandRunner with outputs captured from a real Slurm (tests/data/slurm/).
//
// A command is an argv vector, never a shell string: job names, reasons and comments are passed
// as single arguments and cannot be interpreted by a shell.

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/sim_time.h"

namespace schedmate::slurm {

struct CommandOutput {
  int exit_code = 0;  // the process's exit status (128 + signal when killed)
  std::string out;    // stdout
  std::string err;    // stderr
};

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // Runs argv[0] (looked up in PATH) with `argv` and waits at most `timeout`. A non-zero exit is
  // NOT an error here: it is reported in CommandOutput. Errors: kInvalidArgument (empty argv),
  // kUnavailable (the program cannot be started), kDeadlineExceeded (killed after `timeout`).
  // Thread-safety: implementations must allow concurrent calls.
  virtual Result<CommandOutput> Run(const std::vector<std::string>& argv, Duration timeout) = 0;
};

// Forks and execs the command with stdin from /dev/null, capturing stdout and stderr (each capped
// at `max_output_bytes`; the rest is drained and dropped). Thread-safe.
class SubprocessCommandRunner final : public CommandRunner {
 public:
  explicit SubprocessCommandRunner(size_t max_output_bytes = size_t{64} << 20)
      : max_output_bytes_(max_output_bytes) {}
  Result<CommandOutput> Run(const std::vector<std::string>& argv, Duration timeout) override;

 private:
  size_t max_output_bytes_;
};

// "squeue --json": argv joined with single spaces, for logs and error messages.
std::string JoinArgv(const std::vector<std::string>& argv);

}  // namespace schedmate::slurm
