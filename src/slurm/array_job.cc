#include "slurm/array_job.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "core/file_util.h"
#include "core/strings.h"

namespace schedmate::slurm {
namespace {

constexpr int32_t kMaxArrayTasks = 100'000;

bool PlainWord(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == ':' || c == ',' || c == '+' || c == '-';
  });
}

// One argument for bash: single-quoted, with {task}/{job} spliced in as double-quoted variables.
std::string QuoteArgument(std::string_view arg) {
  std::string out = "'";
  size_t i = 0;
  while (i < arg.size()) {
    if (arg.substr(i, 6) == "{task}" || arg.substr(i, 5) == "{job}") {
      const bool task = arg[i + 1] == 't';
      out += task ? "'\"${SLURM_ARRAY_TASK_ID}\"'" : "'\"${SLURM_ARRAY_JOB_ID}\"'";
      i += task ? 6 : 5;
    } else if (arg[i] == '\'') {
      out += "'\\''";
      ++i;
    } else {
      out += arg[i++];
    }
  }
  return out + "'";
}

// "CANCELLED by 0" -> "CANCELLED"; "COMPLETED+" -> "COMPLETED".
std::string BaseState(std::string_view s) {
  s = Trim(s);
  const size_t end = s.find_first_of(" +");
  return std::string(s.substr(0, end));
}

// "123_4" of array "123" -> 4; nullopt for other jobs and unexpanded records ("123_[5-9]").
std::optional<int32_t> TaskIndex(std::string_view id, const std::string& job_id) {
  id = Trim(id);
  if (id.size() <= job_id.size() + 1 || id.substr(0, job_id.size()) != job_id ||
      id[job_id.size()] != '_') {
    return std::nullopt;
  }
  auto v = ParseInt(id.substr(job_id.size() + 1));
  if (!v || *v < 0 || *v >= kMaxArrayTasks) return std::nullopt;
  return static_cast<int32_t>(*v);
}

// Applies one `JobID|State[|...]` row of squeue or sacct (its fields in `f`) to the task it is
// about and returns that task; nullptr, changing nothing, for a short row, another job's row, an
// index beyond `tasks` or a task that has already ended (a terminal state is final).
ArrayTaskState* ApplyTaskRow(const std::vector<std::string_view>& f, const std::string& job_id,
                             std::vector<ArrayTaskState>& tasks) {
  if (f.size() < 2) return nullptr;
  auto index = TaskIndex(f[0], job_id);
  if (!index || *index >= static_cast<int32_t>(tasks.size())) return nullptr;
  ArrayTaskState& t = tasks[static_cast<size_t>(*index)];
  if (t.ended) return nullptr;
  t.state = BaseState(f[1]);
  t.ended = IsTerminalJobState(t.state);
  return &t;
}

ArrayProgress Count(const std::vector<ArrayTaskState>& tasks) {
  ArrayProgress p;
  p.tasks = static_cast<int32_t>(tasks.size());
  for (const auto& t : tasks) {
    if (t.ended) {
      ++(t.succeeded() ? p.completed : p.failed);
    } else if (t.state == "RUNNING" || t.state == "COMPLETING" || t.state == "CONFIGURING") {
      ++p.running;
    } else {
      ++p.pending;
    }
  }
  return p;
}

bool AllEnded(const std::vector<ArrayTaskState>& tasks) {
  return std::all_of(tasks.begin(), tasks.end(), [](const auto& t) { return t.ended; });
}

}  // namespace

bool IsTerminalJobState(std::string_view state) {
  static constexpr std::string_view kTerminal[] = {"COMPLETED", "FAILED",    "CANCELLED",
                                                   "TIMEOUT",   "NODE_FAIL", "PREEMPTED",
                                                   "BOOT_FAIL", "DEADLINE",  "OUT_OF_MEMORY"};
  return std::find(std::begin(kTerminal), std::end(kTerminal), state) != std::end(kTerminal);
}

Status CheckArrayJobSpec(const ArrayJobSpec& spec) {
  if (spec.command.empty()) return Status::InvalidArgument("array job: no command");
  if (spec.tasks < 1 || spec.tasks > kMaxArrayTasks) {
    return Status::InvalidArgument(
        fmt::format("array job: {} tasks (allowed 1..{})", spec.tasks, kMaxArrayTasks));
  }
  if (spec.max_parallel < 0) {
    return Status::InvalidArgument(fmt::format("array job: max parallel {}", spec.max_parallel));
  }
  if (spec.dir.empty() || spec.dir[0] != '/' ||
      spec.dir.find_first_of(" \t\n\"'%\\$`") != std::string::npos) {
    return Status::InvalidArgument(fmt::format(
        "array job: directory '{}' must be absolute, without spaces, quotes, % or $", spec.dir));
  }
  const std::pair<const char*, const std::string*> words[] = {
      {"name", &spec.name}, {"partition", &spec.partition}, {"time limit", &spec.time_limit}};
  for (const auto& [what, value] : words) {
    if (!PlainWord(*value) || (value == &spec.name && value->empty())) {
      return Status::InvalidArgument(
          fmt::format("array job: {} '{}' must be letters, digits or "
                      "._:,+- characters",
                      what, *value));
    }
  }
  return Status::Ok();
}

std::string ArrayTaskLogPath(const ArrayJobSpec& spec, const std::string& job_id, int32_t task) {
  return fmt::format("{}/{}-{}-{}.log", spec.dir, spec.name, job_id, task);
}

std::string ArrayBatchScript(const ArrayJobSpec& spec) {
  std::string s = "#!/bin/bash\n# Written by schedmate: one array task per index.\n";
  s += fmt::format("#SBATCH --job-name={}\n", spec.name);
  s += fmt::format("#SBATCH --array=0-{}{}\n", spec.tasks - 1,
                   spec.max_parallel > 0 ? fmt::format("%{}", spec.max_parallel) : "");
  if (!spec.partition.empty()) s += fmt::format("#SBATCH --partition={}\n", spec.partition);
  if (!spec.time_limit.empty()) s += fmt::format("#SBATCH --time={}\n", spec.time_limit);
  s += "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n";
  s += fmt::format("#SBATCH --output={}/{}-%A-%a.log\n", spec.dir, spec.name);
  s += "exec";
  for (const auto& a : spec.command) s += " " + QuoteArgument(a);
  return s + "\n";
}

Result<std::string> ArrayJobRunner::Submit(const ArrayJobSpec& spec, Duration command_timeout) {
  if (Status st = CheckArrayJobSpec(spec); !st.ok()) return st;
  const std::string script = fmt::format("{}/{}.sbatch", spec.dir, spec.name);
  if (Status st = WriteStringToFile(script, ArrayBatchScript(spec)); !st.ok()) return st;
  const std::vector<std::string> argv = {"sbatch", "--parsable", script};
  auto r = runner_.Run(argv, command_timeout);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return Status::Unavailable(
        fmt::format("{} failed (exit {}): {}", JoinArgv(argv), r->exit_code, Trim(r->err)));
  }
  // --parsable prints "JOBID" or "JOBID;CLUSTER".
  std::string_view out = Trim(r->out);
  out = out.substr(0, out.find(';'));
  if (out.empty() || !ParseInt(out)) {
    return Status::Unavailable(fmt::format("{}: no job id in its output '{}'", JoinArgv(argv),
                                           Utf8Prefix(Trim(r->out), 200)));
  }
  return std::string(out);
}

Status ArrayJobRunner::Cancel(const std::string& job_id, Duration command_timeout) {
  const std::vector<std::string> argv = {"scancel", job_id};
  auto r = runner_.Run(argv, command_timeout);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return Status::Unavailable(
        fmt::format("{} failed (exit {}): {}", JoinArgv(argv), r->exit_code, Trim(r->err)));
  }
  return Status::Ok();
}

Result<bool> ArrayJobRunner::PollSqueue(const std::string& job_id,
                                        std::vector<ArrayTaskState>& tasks,
                                        Duration command_timeout) {
  const std::vector<std::string> argv = {"squeue", "-h",   "-r", "--states=all",
                                         "-j",     job_id, "-o", "%i|%T|%r"};
  auto r = runner_.Run(argv, command_timeout);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    if (r->err.find("Invalid job id") != std::string::npos) return false;
    return Status::Unavailable(
        fmt::format("{} failed (exit {}): {}", JoinArgv(argv), r->exit_code, Trim(r->err)));
  }
  bool active_listed = false;  // some task that had not ended is still in squeue
  for (auto line : Split(r->out, '\n')) {
    const auto f = Split(line, '|');
    ArrayTaskState* t = ApplyTaskRow(f, job_id, tasks);
    if (t == nullptr) continue;
    active_listed = true;
    t->reason = f.size() > 2 ? std::string(Trim(f[2])) : "";
    if (t->reason == "None") t->reason.clear();
  }
  // Every task still open is missing: slurmctld purged them (MinJobAge) before we saw them end.
  return active_listed || AllEnded(tasks);
}

void ArrayJobRunner::ResolveForgotten(const std::string& job_id, std::vector<ArrayTaskState>& tasks,
                                      Duration command_timeout) {
  auto r =
      runner_.Run({"sacct", "-n", "-X", "-P", "-j", job_id, "-o", "JobID,State"}, command_timeout);
  if (r.ok() && r->exit_code == 0) {
    for (auto line : Split(r->out, '\n')) ApplyTaskRow(Split(line, '|'), job_id, tasks);
  }
  for (auto& t : tasks) {
    if (t.ended) continue;
    t.state = "UNKNOWN";
    t.known = false;
  }
}

Result<ArrayOutcome> ArrayJobRunner::Wait(const std::string& job_id, int32_t tasks,
                                          const ArrayWaitOptions& options) {
  ArrayOutcome out;
  out.job_id = job_id;
  for (int32_t i = 0; i < tasks; ++i) out.tasks.push_back(ArrayTaskState{.index = i});
  const SimTime deadline = clock_.Now() + options.timeout;
  std::optional<ArrayProgress> last;
  while (true) {
    auto known = PollSqueue(job_id, out.tasks, options.command_timeout);
    if (!known.ok()) return known.status();
    if (!*known) ResolveForgotten(job_id, out.tasks, options.command_timeout);
    const ArrayProgress p = Count(out.tasks);
    if (options.on_progress && (!last || !(p == *last))) options.on_progress(p);
    last = p;
    if (!*known || AllEnded(out.tasks)) break;
    if (clock_.Now() >= deadline) {
      out.timed_out = true;
      if (options.cancel_on_timeout) {
        out.cancelled = Cancel(job_id, options.command_timeout).ok();
      }
      break;
    }
    if (options.sleep) {
      options.sleep(options.poll);
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(options.poll.micros()));
    }
  }
  return out;
}

std::vector<int32_t> ArrayOutcome::FailedTasks() const {
  std::vector<int32_t> v;
  for (const auto& t : tasks) {
    if (t.ended && !t.succeeded()) v.push_back(t.index);
  }
  return v;
}

std::vector<int32_t> ArrayOutcome::UnfinishedTasks() const {
  std::vector<int32_t> v;
  for (const auto& t : tasks) {
    if (!t.ended) v.push_back(t.index);
  }
  return v;
}

}  // namespace schedmate::slurm
