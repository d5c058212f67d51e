#pragma once
// A light POSIX-shell reader for job scripts (sbatch scripts, launch wrappers): enough of the shell
// grammar to see the commands a script runs, not an interpreter.
//
// Handled: comments, backslash-newline continuations, single/double quotes (with backslash
// escapes in double quotes), command separators (newline ; && || | &), variable assignments
// (`X=1`, `export X=1`, `local`/`declare`/`readonly`), command-prefix environment assignments
// (`CUDA_VISIBLE_DEVICES=0 python ...`), parameter expansion ($X, ${X}, ${X:-default}, ${X:=d},
// positional $1..$9 and $@ from the caller), word splitting of unquoted expansions, and the
// keywords of compound commands (if/then/else/fi, for/do/done, while, case) which are stepped
// over so the commands inside are still seen. Command substitution `$(...)` and backticks are
// not run: the word keeps its text and is marked unknown, except the script-directory idioms
// (`$(dirname "$0")`, `$(dirname "${BASH_SOURCE[0]}")`, `$(cd "$(dirname "$0")" && pwd)`, with
// realpath/readlink -f around $0), which expand to ShellContext::script_dir; `$0` is the script.
// Functions (`name() { ... }`, `function name { ... }`) are not run where they are defined but
// where they are called, with the call's words as $1..$N. `. FILE` / `source FILE` read FILE
// through ShellContext::source (when set): its variables and functions join the script's, and
// its commands are returned with `file` naming it.
// `#SBATCH` lines are returned separately as directives.
//
// Thread-safety: stateless functions.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace schedmate::advisor {

struct ShellWord {
  std::string text;
  bool unknown = false;  // contains an unexpanded substitution or unset positional parameter
};

struct ShellCommand {
  std::vector<ShellWord> words;            // after expansion; words[0] is the program
  std::map<std::string, std::string> env;  // prefix assignments
  int line = 0;                            // 1-based line where the command starts
  std::string file;      // the sourced file it comes from (as ShellContext::source named it);
                         // "" = the parsed text itself
  std::string function;  // the function whose call ran it; "" at top level
};

struct SbatchDirective {
  std::string option;  // "--gres", "-N", ...
  std::string value;   // "" for flags
  int line = 0;
};

struct ShellScript {
  std::vector<ShellCommand> commands;
  std::vector<SbatchDirective> sbatch;
  std::map<std::string, std::string> variables;  // final values of assigned variables
  std::map<std::string, int> variable_lines;     // where each was last assigned
  std::vector<std::string> sourced;              // files read through ShellContext::source
};

struct ShellContext {
  std::vector<std::string> positional;           // $1, $2, ...
  std::map<std::string, std::string> variables;  // inherited (exported) variables
  std::string script_path;                       // $0 ("" = unknown)
  std::string script_dir;  // what the script-directory idioms expand to ("" = unknown)
  // Reads a file named by `. FILE` / `source FILE` (FILE as expanded): its text and the name its
  // commands are reported under, or nullopt when it cannot be read. Unset: sourcing is skipped.
  std::function<std::optional<std::pair<std::string, std::string>>(const std::string& file)> source;
};

ShellScript ParseShell(std::string_view text, const ShellContext& context = {});

// The variables Slurm sets for a batch script, as far as its #SBATCH directives decide them
// (SLURM_NNODES, SLURM_JOB_NUM_NODES, SLURM_NTASKS, SLURM_NPROCS, SLURM_NTASKS_PER_NODE,
// SLURM_CPUS_PER_TASK, SLURM_GPUS_PER_NODE, SLURM_GPUS_ON_NODE), added to `vars` where it has no
// value yet; ParseShell expands them (`torchrun --nproc_per_node=$SLURM_GPUS_ON_NODE`).
void SeedSlurmEnvironment(const std::vector<SbatchDirective>& sbatch,
                          std::map<std::string, std::string>& vars);

// Parses `--opt value`, `--opt=value`, `-N 2`, `-N2` in #SBATCH / sbatch option syntax.
std::vector<SbatchDirective> ParseSbatchOptions(const std::vector<std::string>& words, int line);

}  // namespace schedmate::advisor
