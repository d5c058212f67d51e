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

// One cluster of several (service's slurm.clusters): every command goes to `inner` with
// SLURM_CONF=slurm_conf in its environment (through env(1)), or, for the clients that take it,
// with --clusters=cluster (Slurm's -M: squeue, sinfo, scontrol, sacct, sbatch, scancel, sprio,
// sshare; other programs run unchanged). Set one of the two. Thread-safe when `inner` is.
class ClusterCommandRunner final : public CommandRunner {
 public:
  ClusterCommandRunner(CommandRunner& inner, std::string slurm_conf, std::string cluster)
      : inner_(inner), slurm_conf_(std::move(slurm_conf)), cluster_(std::move(cluster)) {}
  Result<CommandOutput> Run(const std::vector<std::string>& argv, Duration timeout) override;
  // The argv `inner` is given for `argv`.
  std::vector<std::string> Rewrite(const std::vector<std::string>& argv) const;

 private:
  CommandRunner& inner_;
  std::string slurm_conf_;
  std::string cluster_;
};

// "squeue --json": argv joined with single spaces, for logs and error messages.
std::string JoinArgv(const std::vector<std::string>& argv);

}  // namespace schedmate::slurm
