#include "slurm/assoc.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "core/strings.h"
#include "slurm/sacctmgr_table.h"

namespace schedmate::slurm {
namespace {

constexpr int kMaxDepth = 64;  // deeper than any real account tree; stops a cycle

const AssocLimits* AccountRow(const std::vector<AssocLimits>& all, std::string_view account) {
  for (const auto& a : all)
    if (a.user.empty() && a.partition.empty() && a.account == account) return &a;
  return nullptr;
}

}  // namespace

Result<std::vector<AssocLimits>> ParseSacctmgrAssoc(std::string_view text) {
  static const std::initializer_list<std::string_view> kKeyColumns = {"Cluster", "Account", "User",
                                                                      "Partition", "ParentName"};
  SM_ASSIGN_OR_RETURN(const SacctmgrTable t,
                      ParseSacctmgrTable(text, [](const SacctmgrTable& table) -> std::string {
                        for (std::string_view need : kKeyColumns) {
                          if (table.Column(need) < 0) {
                            return fmt::format("the header has no {} column", need);
                          }
                        }
                        return "";
                      }));
  std::vector<AssocLimits> out;
  for (const auto& row : t.rows) {
    AssocLimits a;
    auto field = [&](std::string_view name) { return std::string(Trim(row[t.Column(name)])); };
    a.cluster = field("Cluster");
    a.account = field("Account");
    a.user = field("User");
    a.partition = field("Partition");
    a.parent = field("ParentName");
    a.limits = t.Values(row, kKeyColumns);
    out.push_back(std::move(a));
  }
  std::sort(out.begin(), out.end(), [](const AssocLimits& a, const AssocLimits& b) {
    return std::tie(a.cluster, a.account, a.user, a.partition) <
           std::tie(b.cluster, b.account, b.user, b.partition);
  });
  return out;
}

std::vector<const AssocLimits*> AssocChain(const std::vector<AssocLimits>& all,
                                           std::string_view account, std::string_view user,
                                           std::string_view partition) {
  std::vector<const AssocLimits*> chain;
  const AssocLimits* any_partition = nullptr;
  for (const auto& a : all) {
    if (a.account != account || a.user != user || user.empty()) continue;
    if (!partition.empty() && a.partition == partition) chain.push_back(&a);
    if (a.partition.empty()) any_partition = &a;
  }
  if (chain.empty() && any_partition != nullptr) chain.push_back(any_partition);
  if (chain.empty()) return chain;
  std::string next(account);
  for (int depth = 0; depth < kMaxDepth && !next.empty(); ++depth) {
    const AssocLimits* row = AccountRow(all, next);
    if (row == nullptr || std::find(chain.begin(), chain.end(), row) != chain.end()) break;
    chain.push_back(row);
    next = row->parent;
  }
  return chain;
}

bool AccountUnder(const std::vector<AssocLimits>& all, std::string_view account,
                  std::string_view ancestor) {
  std::string at(account);
  for (int depth = 0; depth < kMaxDepth && !at.empty(); ++depth) {
    if (at == ancestor) return true;
    const AssocLimits* row = AccountRow(all, at);
    if (row == nullptr) return false;
    at = row->parent;
  }
  return false;
}

}  // namespace schedmate::slurm
