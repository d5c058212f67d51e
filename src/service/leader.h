#pragma once
// Leadership: which of several `schedmate serve` instances on one shared store acts.
//
// SQLite (one file, one instance): SoleLeader, always the leader.
// PostgreSQL: PgLeaderElection. The leader holds a session-level advisory lock on its own
// connection (keys kLeaderLockKey and the hash of the schema, so deployments in different
// schemas or databases of one server are independent) AND the lease row `service_leader` (holder
// id, epoch, expiry, server pid), renewed once per poll. Rules:
//   - take over: pg_try_advisory_lock succeeds (the previous leader's session ended: kill -9
//     closes its socket and the server drops the lock at once) -> in one transaction the lease
//     row gets this holder, epoch + 1, expiry now + lease_ttl (database clock). The new epoch is
//     the fencing token: ServiceStore refuses action writes of any other (service_store.h).
//   - renew: UPDATE the row WHERE holder = me AND epoch = mine; 0 rows or any error -> step down
//     at once (unlock, drop the session), act no more.
//   - a follower that sees the lease expired for more than lease_ttl while the lock is still held
//     (a hung leader, a vanished host before TCP keepalives fire) terminates the holder's server
//     backend (pg_terminate_backend, same role), so the lock frees and the next poll takes over.
// A follower polls at the same interval, so after a kill -9 it takes over within one poll
// interval (plus its tick).
//
// After a takeover, ReconcileIntents settles what the dead leader left (below).

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "core/result.h"
#include "core/sim_time.h"
#include "service/service_store.h"
#include "slurm/slurm_backend.h"
#include "store/pg_db.h"

namespace schedmate::service {

enum class Role { kLeader, kFollower };
std::string_view RoleName(Role r);

struct LeaderStatus {
  Role role = Role::kLeader;
  bool shared = false;  // a shared (PostgreSQL) store: there may be other instances
  std::string id;       // this instance
  std::string holder;   // the lease holder as last read ("" unknown)
  int64_t epoch = 0;    // the lease epoch (this instance's while leader)
  std::optional<SimTime> lease_expires;  // database clock
  bool became_leader = false;            // this Renew() made it leader: reconcile now
  int64_t takeovers = 0;                 // times this instance became leader
  std::string last_error;                // of the last Renew() ("" = fine)
};

class Leadership {
 public:
  virtual ~Leadership() = default;
  // Once per poll, before acting. Never an error: a failure is a follower with last_error.
  virtual LeaderStatus Renew() = 0;
  // The last Renew()'s result (thread-safe).
  virtual LeaderStatus Current() const = 0;
  // Clean stop: give the lease up so another instance takes over at its next poll.
  virtual void Resign() {}
};

class SoleLeader final : public Leadership {
 public:
  LeaderStatus Renew() override { return {}; }
  LeaderStatus Current() const override { return {}; }
};

constexpr int32_t kLeaderLockKey = 7362819;

class PgLeaderElection final : public Leadership {
 public:
  // Connects its own session to `url` (the lock lives on it). `id` names this instance (default:
  // host:pid). The lease table must exist (ServiceStore::Attach migrates it).
  // `cluster` (slurm.clusters) has its own lease row and lock: one leader per cluster.
  static Result<std::unique_ptr<PgLeaderElection>> Open(const std::string& url, std::string id,
                                                        Duration lease_ttl,
                                                        std::string cluster = "default");
  LeaderStatus Renew() override;
  LeaderStatus Current() const override;
  void Resign() override;

 private:
  PgLeaderElection(std::unique_ptr<store::PgDb> db, std::string id, Duration ttl,
                   std::string cluster)
      : db_(std::move(db)), ttl_(ttl), cluster_(std::move(cluster)) {
    status_.shared = true;
    status_.role = Role::kFollower;
    status_.id = std::move(id);
  }
  Status TryTakeOver(LeaderStatus& s);
  Status RenewLease(LeaderStatus& s);
  Status ReadLease(LeaderStatus& s, bool& stale, int& holder_pid);
  void StepDown(LeaderStatus& s, const std::string& why);
  std::unique_ptr<store::PgDb> db_;
  Duration ttl_;
  std::string cluster_;
  mutable std::mutex mu_;
  LeaderStatus status_;
};

// The instance id used when none is configured: "<hostname>:<pid>".
std::string DefaultInstanceId();

// What a new leader found and did with the intents a dead leader left "planned".
struct ReconcileSummary {
  int64_t confirmed = 0;    // Slurm shows it happened: marked done
  int64_t completed = 0;    // Slurm shows it did not: executed now (done or failed)
  int64_t interrupted = 0;  // Slurm cannot tell (job gone) or nothing to check: marked interrupted
  int64_t released_runs = 0;  // runs claimed but never finished: handled again this poll
};

// Run by a new leader before it acts (its fence set on `store`): every "planned" action of an
// earlier epoch is settled by what Slurm shows now —
//   requeue:  job pending/running/completing again, or restarted -> done ("confirmed");
//             job still in its failed state -> requeued now with the recorded exclusions and
//             release time -> done/failed ("completed"); job gone -> interrupted
//   hold:     job held (requeued held) -> done; still failed -> held now; gone -> interrupted
//   drain:    node drained -> done; not drained -> drained now with the recorded reason
//   resume:   node not drained -> done; still drained for schedmate -> resumed now
//   notices, priority and other kinds: no Slurm effect to check -> interrupted (never repeated)
// Then runs claimed but not finished are released (ReleaseUnfinishedRuns), so the new leader
// diagnoses them again; its executors re-check Slurm (a requeued job is "job_active").
// Intents of the current epoch are left alone. Errors: the first store error (Slurm errors leave
// the intent planned for the next call).
Result<ReconcileSummary> ReconcileIntents(ServiceStore& store, slurm::SlurmBackend& backend,
                                          int64_t epoch, SimTime now);

}  // namespace schedmate::service
