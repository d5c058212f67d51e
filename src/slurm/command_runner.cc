#include "slurm/command_runner.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/strings.h"

extern char** environ;

namespace schedmate::slurm {

std::string JoinArgv(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    s += a;
  }
  return s;
}

namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) close(f);
  }
};

}  // namespace

Result<CommandOutput> SubprocessCommandRunner::Run(const std::vector<std::string>& argv,
                                                   Duration timeout) {
  if (argv.empty()) return Status::InvalidArgument("empty command");
  Pipe out_pipe, err_pipe;
  if (pipe2(out_pipe.fd, O_CLOEXEC) != 0 || pipe2(err_pipe.fd, O_CLOEXEC) != 0) {
    return Status::Unavailable(fmt::format("pipe: {}", std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe.fd[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Own process group, so a timeout can kill the command and anything it started.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return Status::Unavailable(fmt::format("cannot run {}: {}", argv[0], std::strerror(rc)));
  }
  close(out_pipe.fd[1]);
  out_pipe.fd[1] = -1;
  close(err_pipe.fd[1]);
  err_pipe.fd[1] = -1;

  CommandOutput result;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(timeout.micros());
  bool timed_out = false;
  pollfd fds[2] = {{out_pipe.fd[0], POLLIN, 0}, {err_pipe.fd[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    int n = poll(fds, 2, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = read(fds[i].fd, buf, sizeof(buf));
      if (got > 0) {
        size_t room =
            max_output_bytes_ > sinks[i]->size() ? max_output_bytes_ - sinks[i]->size() : 0;
        sinks[i]->append(buf, std::min<size_t>(room, static_cast<size_t>(got)));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  if (timed_out) kill(-pid, SIGKILL);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return Status::DeadlineExceeded(
        fmt::format("{} did not finish within {}", JoinArgv(argv), FormatDuration(timeout)));
  }
  if (WIFEXITED(wstatus)) {
    result.exit_code = WEXITSTATUS(wstatus);
  } else if (WIFSIGNALED(wstatus)) {
    result.exit_code = 128 + WTERMSIG(wstatus);
  }
  if (result.exit_code == 127 && result.out.empty()) {
    return Status::Unavailable(fmt::format("cannot run {}: {}", argv[0], Trim(result.err)));
  }
  return result;
}

std::vector<std::string> ClusterCommandRunner::Rewrite(const std::vector<std::string>& argv) const {
  if (argv.empty()) return argv;
  std::vector<std::string> out;
  if (!slurm_conf_.empty()) {
    out = {"env", "SLURM_CONF=" + slurm_conf_};
  }
  out.push_back(argv[0]);
  static const char* const kTakesClusters[] = {"squeue", "sinfo",   "scontrol", "sacct",
                                               "sbatch", "scancel", "sprio",    "sshare"};
  if (!cluster_.empty()) {
    for (const char* name : kTakesClusters) {
      if (argv[0] == name) {
        out.push_back("--clusters=" + cluster_);
        break;
      }
    }
  }
  out.insert(out.end(), argv.begin() + 1, argv.end());
  return out;
}

Result<CommandOutput> ClusterCommandRunner::Run(const std::vector<std::string>& argv,
                                                Duration timeout) {
  if (argv.empty()) return Status::InvalidArgument("empty command");
  return inner_.Run(Rewrite(argv), timeout);
}

}  // namespace schedmate::slurm
