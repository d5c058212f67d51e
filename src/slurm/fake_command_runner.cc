#include "slurm/fake_command_runner.h"

#include <algorithm>

namespace schedmate::slurm {

void FakeCommandRunner::SetOutput(const std::vector<std::string>& prefix, std::string out,
                                  int exit_code, std::string err) {
  std::lock_guard lock(mu_);
  Rule& rule = rules_[prefix];
  rule.output = CommandOutput{exit_code, std::move(out), std::move(err)};
  rule.error = Status::Ok();
  rule.has_fixed = true;
}

void FakeCommandRunner::QueueOutput(const std::vector<std::string>& prefix, std::string out,
                                    int exit_code, std::string err) {
  std::lock_guard lock(mu_);
  rules_[prefix].queue.push_back(CommandOutput{exit_code, std::move(out), std::move(err)});
}

void FakeCommandRunner::SetError(const std::vector<std::string>& prefix, Status status) {
  std::lock_guard lock(mu_);
  Rule& rule = rules_[prefix];
  rule.error = std::move(status);
  rule.has_fixed = true;
}

Result<CommandOutput> FakeCommandRunner::Run(const std::vector<std::string>& argv,
                                             Duration /*timeout*/) {
  if (argv.empty()) return Status::InvalidArgument("empty command");
  std::lock_guard lock(mu_);
  if (calls_.size() >= kMaxCalls) calls_.erase(calls_.begin(), calls_.begin() + kMaxCalls / 2);
  calls_.push_back(JoinArgv(argv));
  Rule* best = nullptr;
  size_t best_len = 0;
  for (auto& [prefix, rule] : rules_) {
    if (prefix.size() > argv.size() || (best != nullptr && prefix.size() <= best_len)) continue;
    if (!std::equal(prefix.begin(), prefix.end(), argv.begin())) continue;
    if (!rule.has_fixed && rule.queue.empty()) continue;
    best = &rule;
    best_len = prefix.size();
  }
  if (best == nullptr) {
    return CommandOutput{1, "", "fake: no canned output for " + JoinArgv(argv)};
  }
  if (!best->queue.empty()) {
    CommandOutput out = std::move(best->queue.front());
    best->queue.erase(best->queue.begin());
    return out;
  }
  if (!best->error.ok()) return best->error;
  return best->output;
}

std::vector<std::string> FakeCommandRunner::Calls() const {
  std::lock_guard lock(mu_);
  return calls_;
}

std::vector<std::string> FakeCommandRunner::CallsStartingWith(const std::string& prefix) const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& c : calls_)
    if (c.compare(0, prefix.size(), prefix) == 0) out.push_back(c);
  return out;
}

void FakeCommandRunner::ClearCalls() {
  std::lock_guard lock(mu_);
  calls_.clear();
}

}  // namespace schedmate::slurm
