#include "failure/recovery_planner.h"

#include <algorithm>

namespace schedmate::failure {

std::string_view RecoveryActionKindName(RecoveryAction::Kind kind) {
  switch (kind) {
    case RecoveryAction::Kind::kDrainNode:
      return "drain_node";
    case RecoveryAction::Kind::kRequeue:
      return "requeue";
    case RecoveryAction::Kind::kHold:
      return "hold";
    case RecoveryAction::Kind::kNotifyUser:
      return "notify_user";
    case RecoveryAction::Kind::kNotifyAdmin:
      return "notify_admin";
  }
  return "notify_user";
}

namespace {

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

std::string RootSummary(const Diagnosis& d) {
  if (!d.root_cause) return "no error line found";
  std::string text = d.root_cause->text;
  if (text.size() > 160) text = text.substr(0, 157) + "...";
  return "line " + std::to_string(d.root_cause->line_no) + ": " + text;
}

}  // namespace

RecoveryPlan PlanRecovery(const Diagnosis& d, const JobContext& job, const RecoveryPolicy& policy) {
  RecoveryPlan plan;
  using Kind = RecoveryAction::Kind;
  const std::string what = d.category.empty() ? std::string("failure") : d.category;

  if (d.label == FailureLabel::kApplication) {
    RecoveryAction a;
    a.kind = Kind::kNotifyUser;
    a.reason = "application failure (" + what + "): " +
               (d.explanation.empty() ? RootSummary(d) : d.explanation + " " + RootSummary(d));
    a.hint = d.hint;
    plan.push_back(std::move(a));
    return plan;
  }
  if (d.label == FailureLabel::kUnknown) {
    if (!d.root_cause) {
      RecoveryAction a;
      a.kind = Kind::kNotifyUser;
      a.reason = "no failure found in the log; nothing to recover";
      plan.push_back(std::move(a));
      return plan;
    }
    RecoveryAction hold;
    hold.kind = Kind::kHold;
    hold.reason = "failure cause unclear (" + RootSummary(d) + "); held for a person to look";
    RecoveryAction admin;
    admin.kind = Kind::kNotifyAdmin;
    admin.reason = hold.reason;
    plan.push_back(std::move(hold));
    admin.hint =
        "Diagnose the log; label it with `schedmate diagnose --learn` so the next one is known.";
    plan.push_back(std::move(admin));
    return plan;
  }

  // Infrastructure.
  std::vector<std::string> drained;
  if (d.drain_suspect && policy.drain_suspect_nodes) {
    std::vector<std::string> suspects = d.nodes;
    if (suspects.empty() && job.nodes.size() == 1) suspects = job.nodes;
    std::sort(suspects.begin(), suspects.end());
    suspects.erase(std::unique(suspects.begin(), suspects.end()), suspects.end());
    for (const auto& node : suspects) {
      RecoveryAction a;
      a.kind = Kind::kDrainNode;
      a.node = node;
      a.reason = "schedmate: " + what + " (" + RootSummary(d) + ")";
      if (a.reason.size() > 200) a.reason = a.reason.substr(0, 197) + "...";
      plan.push_back(std::move(a));
      drained.push_back(node);
    }
    if (suspects.empty() && !job.nodes.empty()) {
      RecoveryAction a;
      a.kind = Kind::kNotifyAdmin;
      a.reason =
          what + " on one of the job's nodes, the log does not say which: " + Join(job.nodes);
      a.hint = d.hint;
      plan.push_back(std::move(a));
    }
  }

  if (job.restarts >= policy.max_infra_retries) {
    RecoveryAction hold;
    hold.kind = Kind::kHold;
    hold.reason = "infrastructure failure (" + what + ") after " + std::to_string(job.restarts) +
                  " requeues; retry budget of " + std::to_string(policy.max_infra_retries) +
                  " exhausted";
    plan.push_back(hold);
    RecoveryAction admin;
    admin.kind = Kind::kNotifyAdmin;
    admin.reason = "job " + (job.job_id.empty() ? std::string("?") : job.job_id) +
                   " failed repeatedly on infrastructure: " + hold.reason;
    admin.hint = d.hint;
    plan.push_back(std::move(admin));
    return plan;
  }

  RecoveryAction rq;
  rq.kind = Kind::kRequeue;
  rq.attempt = job.restarts + 1;
  rq.checkpoint = job.checkpoint ? job.checkpoint : d.checkpoint;
  if (d.category == "preemption") {
    rq.delay = Duration::Zero();
  } else {
    Duration delay = policy.backoff_base;
    for (int i = 0; i < job.restarts && delay < policy.backoff_cap; ++i) delay = delay * 2;
    rq.delay = std::min(delay, policy.backoff_cap);
  }
  rq.exclude_nodes = drained;
  rq.reason = "infrastructure failure (" + what + "), retry " + std::to_string(rq.attempt) +
              " of " + std::to_string(policy.max_infra_retries) +
              (rq.checkpoint ? " from checkpoint " + *rq.checkpoint : " from the start");
  plan.push_back(std::move(rq));

  RecoveryAction user;
  user.kind = Kind::kNotifyUser;
  user.reason = "your job hit an infrastructure failure (" + what + ") and was requeued; " +
                (d.explanation.empty() ? RootSummary(d) : d.explanation);
  user.hint = d.hint;
  plan.push_back(std::move(user));
  return plan;
}

}  // namespace schedmate::failure
