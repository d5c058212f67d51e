// The companion's side of leadership on a shared store (leader.h): which passes act, what a
// follower shows, what a new leader does before it acts.
#include <fmt/format.h>

#include "service/companion.h"
#include "service/leader.h"

namespace schedmate::service {

bool Companion::LeaderTurn(SimTime now) {
  LeaderStatus ls = deps_.leadership->Renew();
  std::lock_guard lock(engine_mu_);
  if (ls.last_error != leadership_.last_error && !ls.last_error.empty()) {
    fmt::print(stderr, "schedmate serve: leadership: {}\n", ls.last_error);
  }
  if (ls.role != leadership_.role || ls.became_leader) {
    fmt::print(stderr, "schedmate serve: {} is now {} (lease holder {}, epoch {})\n", ls.id,
               RoleName(ls.role), ls.holder, ls.epoch);
  }
  leadership_ = ls;
  if (!ls.shared) return true;
  if (ls.role != Role::kLeader) {
    // A stale token: any action write (an API resume on a follower) is refused by the store.
    deps_.store.SetFence(LeaseFence{ls.id, -1});
    reconcile_pending_ = false;
    FollowerPass(now);
    return false;
  }
  deps_.store.SetFence(LeaseFence{ls.id, ls.epoch});
  if (ls.became_leader) reconcile_pending_ = true;
  if (!reconcile_pending_) return true;
  auto sum = ReconcileIntents(deps_.store, deps_.backend, ls.epoch, now);
  if (!sum.ok()) {
    StoreOk(sum.status(), "reconciling the previous leader's actions");
    Publish(now, slurm_ok_, "reconciling: " + sum.status().message(), last_tick_);
    return false;  // acts only once what the dead leader left is settled
  }
  reconcile_pending_ = false;
  fmt::print(stderr,
             "schedmate serve: took over at epoch {}: previous leader's actions confirmed {}, "
             "completed {}, marked interrupted {}; unfinished runs handled again {}\n",
             ls.epoch, sum->confirmed, sum->completed, sum->interrupted, sum->released_runs);
  StoreOk(LoadSharedState(), "loading the previous leader's state");
  return true;
}

void Companion::FollowerPass(SimTime now) {
  // The read API serves what the leader wrote: recent failures and actions from the store.
  Stopwatch watch;
  StoreOk(LoadSharedState(), "reading the leader's records");
  Publish(now, slurm_ok_,
          leadership_.last_error.empty() ? fmt::format("follower: {} acts (lease epoch {})",
                                                       leadership_.holder, leadership_.epoch)
                                         : "follower: " + leadership_.last_error,
          Duration::FromSecondsF(watch.ElapsedSeconds()));
}

}  // namespace schedmate::service
