#pragma once
// Association limits as `sacctmgr -P show assoc format=...` prints them (slurmdbd sites), so
// `why` can name the limit a job waits on (AssocGrpGRES, AssocMaxJobsLimit...) and its value.
//
// Slurm's associations form a tree per cluster: root -> accounts (ParentName: the parent
// account) -> users (one per account, optionally one per partition). A job's limits are its user
// association's and, for Grp limits, every ancestor account's too (each counts the jobs of its
// whole subtree). sacctmgr prints Max limits inherited from above on each child, Grp limits only
// where they are set.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace schedmate::slurm {

struct AssocLimits {
  std::string cluster;
  std::string account;
  std::string user;       // "" for an account's own association
  std::string partition;  // "" when it holds for every partition
  std::string parent;     // account rows: the parent account ("" for root)
  // sacctmgr's column -> value, only non-empty ones: "GrpTRES" -> "gres/gpu=3".
  std::map<std::string, std::string> limits;
};

// The columns SlurmBackend::ListAssociations asks for (the five identifying ones first).
inline constexpr const char* kAssocFormat =
    "Cluster,Account,User,Partition,ParentName,GrpTRES,GrpTRESMins,GrpTRESRunMins,GrpJobs,"
    "GrpSubmit,GrpWall,MaxTRES,MaxTRESPerNode,MaxTRESMins,MaxJobs,MaxSubmit,MaxWall";

// Parses `sacctmgr -P show assoc format=...` (a header naming the columns, Cluster, Account,
// User, Partition and ParentName among them, then one line per association). kInvalidArgument
// naming "sacctmgr:LINE" for a line whose field count differs from the header's, or a header
// without those columns. Sorted by (cluster, account, user, partition).
Result<std::vector<AssocLimits>> ParseSacctmgrAssoc(std::string_view text);

// The associations whose limits apply to a job of `user` under `account` in `partition`, nearest
// first: the user's association for that partition (else the one for every partition), then
// the account's own and each parent account's up to root. Empty when the user has none there.
std::vector<const AssocLimits*> AssocChain(const std::vector<AssocLimits>& all,
                                           std::string_view account, std::string_view user,
                                           std::string_view partition);

// Whether `account` is `ancestor` or lies below it in the account tree of `all`.
bool AccountUnder(const std::vector<AssocLimits>& all, std::string_view account,
                  std::string_view ancestor);

}  // namespace schedmate::slurm
