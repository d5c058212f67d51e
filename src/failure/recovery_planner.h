#pragma once
// PlanRecovery: diagnosis + job context -> recovery plan.
//
// Rationale (rules, in order):
//  - application failure: never requeue (the same code fails the same way); notify the user with
//    the explanation and the category's concrete hint.
//  - unknown: no automatic action beyond holding the job and asking a person to look (a guess
//    must not drain nodes or burn retries).
//  - infrastructure failure:
//      * drain the nodes the log names near the failure when the category implicates the node
//        (hardware, driver, node failure); with no node in the log, a single-node job's node is
//        drained, a multi-node job's nodes are listed for the operators instead;
//      * if the job has already been requeued max_infra_retries times: hold it and notify the
//        operators (repeated infrastructure failures need a person);
//      * else requeue from the latest checkpoint (the job dir's, else the log's), after
//        backoff_base * 2^restarts (capped; preemptions retry at once), excluding drained nodes.
// Output is deterministic: nodes are sorted, actions come in the order above.

#include "failure/diagnosis.h"
#include "failure/recovery_plan.h"

namespace schedmate::failure {

RecoveryPlan PlanRecovery(const Diagnosis& diagnosis, const JobContext& job,
                          const RecoveryPolicy& policy);

}  // namespace schedmate::failure
