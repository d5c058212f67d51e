#include "service/pending_reasons.h"

#include <fmt/format.h>
#include <re2/re2.h>
#include <yaml-cpp/yaml.h>

#include "core/builtin_data.h"
#include "core/check.h"
#include "core/strings.h"

namespace schedmate::service {
namespace {

constexpr std::pair<ReasonKind, std::string_view> kKindNames[] = {
    {ReasonKind::kResources, "resources"},
    {ReasonKind::kPriority, "priority"},
    {ReasonKind::kDependency, "dependency"},
    {ReasonKind::kBeginTime, "begin_time"},
    {ReasonKind::kHeld, "held"},
    {ReasonKind::kPartition, "partition"},
    {ReasonKind::kNodes, "nodes"},
    {ReasonKind::kReservation, "reservation"},
    {ReasonKind::kAccount, "account"},
    {ReasonKind::kLimitGroup, "limit_group"},
    {ReasonKind::kLimitJob, "limit_job"},
    {ReasonKind::kTransient, "transient"},
    {ReasonKind::kFailure, "failure"},
    {ReasonKind::kUnknown, "unknown"},
};

Status YamlError(std::string_view source, const YAML::Node& n, const std::string& what) {
  return Status::InvalidArgument(
      fmt::format("{}:{}: {}", source, n.Mark().line >= 0 ? n.Mark().line + 1 : 0, what));
}

Result<std::string> ScalarAt(std::string_view source, const YAML::Node& map, const char* key) {
  const YAML::Node v = map[key];
  if (!v || !v.IsScalar() || v.Scalar().empty()) {
    return YamlError(source, map, fmt::format("'{}' must be a non-empty string", key));
  }
  return v.Scalar();
}

Status ReadWordMap(std::string_view source, const YAML::Node& node, const char* name,
                   std::map<std::string, std::string>& out) {
  if (!node || !node.IsMap())
    return YamlError(source, node, fmt::format("'{}' must be a map", name));
  for (const auto& kv : node) {
    if (!kv.second.IsScalar()) {
      return YamlError(source, kv.second,
                       fmt::format("{}.{}: expected words", name, kv.first.as<std::string>()));
    }
    out[kv.first.as<std::string>()] = kv.second.Scalar();
  }
  return Status::Ok();
}

std::optional<ReasonKind> ParseKind(std::string_view name) {
  for (const auto& [k, n] : kKindNames)
    if (n == name) return k;
  return std::nullopt;
}

std::string Capitalised(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

// Words for a limit family member, from its parts.
std::string FamilyWords(const ReasonInfo& r, const std::string& scope, const std::string& res) {
  const std::string what = r.minutes ? res + " x minutes" : res;
  if (r.limit == "Min") {
    return fmt::format(
        "The job asks for less {} than {} requires of each job; it will not start "
        "as submitted.",
        what, scope);
  }
  if (r.per == "PerJob" || r.per == "PerNode") {
    return fmt::format(
        "The job asks for more {} than {} allows {}; it will not start as "
        "submitted.",
        what, scope, r.per == "PerJob" ? "per job" : "on each node");
  }
  if (r.per == "PerUser") {
    return fmt::format(
        "Your running jobs already use the {} that {} allows one user; the job "
        "starts when some of them end.",
        what, scope);
  }
  if (r.minutes) {
    return fmt::format(
        "{} has used its aggregate allowance of {}{}; the job waits until that "
        "usage goes down.",
        Capitalised(scope), what,
        r.code.find("RunMinutes") != std::string::npos ? " of running jobs" : "");
  }
  return fmt::format(
      "{} already uses its aggregate limit of {}; the job starts when some of "
      "its other jobs end.",
      Capitalised(scope), what);
}

}  // namespace

std::string_view ReasonKindName(ReasonKind k) {
  for (const auto& [kind, name] : kKindNames)
    if (kind == k) return name;
  return "unknown";
}

Result<ReasonCatalogue> ReasonCatalogue::Parse(std::string_view yaml, std::string_view source) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(
        fmt::format("{}:{}: {}", source, e.mark.line >= 0 ? e.mark.line + 1 : 0, e.msg));
  }
  if (!root.IsMap()) return Status::InvalidArgument(std::string(source) + ": expected a map");
  ReasonCatalogue c;
  const YAML::Node list = root["explicit"];
  if (!list || !list.IsSequence()) return YamlError(source, root, "'explicit' must be a list");
  for (const auto& e : list) {
    if (!e.IsMap()) return YamlError(source, e, "each reason must be a map");
    SM_ASSIGN_OR_RETURN(std::string code, ScalarAt(source, e, "code"));
    SM_ASSIGN_OR_RETURN(std::string kind_name, ScalarAt(source, e, "kind"));
    SM_ASSIGN_OR_RETURN(std::string words, ScalarAt(source, e, "words"));
    auto kind = ParseKind(kind_name);
    if (!kind) return YamlError(source, e, "unknown kind '" + kind_name + "'");
    if (!c.explicit_.emplace(code, Entry{*kind, words}).second) {
      return YamlError(source, e, "reason '" + code + "' listed twice");
    }
  }
  const YAML::Node families = root["families"];
  if (!families || !families.IsMap()) return YamlError(source, root, "'families' must be a map");
  SM_RETURN_IF_ERROR(ReadWordMap(source, families["scopes"], "scopes", c.scopes_));
  SM_RETURN_IF_ERROR(ReadWordMap(source, families["resources"], "resources", c.resources_));
  for (const char* scope : {"Assoc", "QOS", "Account"}) {
    if (!c.scopes_.count(scope)) {
      return YamlError(source, families, fmt::format("scopes: '{}' is missing", scope));
    }
  }
  return c;
}

const ReasonCatalogue& ReasonCatalogue::Builtin() {
  static const ReasonCatalogue& kData = ParseBuiltinOrDie<ReasonCatalogue>(
      BuiltinPendingReasonsYaml(), "builtin:slurm_pending_reasons.yaml");
  return kData;
}

bool ReasonCatalogue::ReadFamily(const std::string& code, ReasonInfo& info) const {
  static const RE2 kScoped(
      "(Assoc|QOS)(Grp|Max|Min)([A-Za-z]+?)(RunMinutes|Minutes|Mins)?(PerJob|PerNode|PerUser)?"
      "(Limit|NotSatisfied)?");
  static const RE2 kPerAccount("Max([A-Za-z]+?)(Minutes|Mins)?PerAccount");
  std::string scope, limit, resource, minutes, per;
  if (RE2::FullMatch(code, kScoped, &scope, &limit, &resource, &minutes, &per)) {
    // "AssocMaxJobsLimit": a user's running jobs; "...MaxSubmitJob..": running + pending.
  } else if (RE2::FullMatch(code, kPerAccount, &resource, &minutes)) {
    scope = "Account";
    limit = "Max";
    per = "PerAccount";
  } else {
    return false;
  }
  auto res = resources_.find(resource);
  if (res == resources_.end()) return false;
  info.scope = scope;
  info.limit = limit;
  info.resource = resource;
  info.per = per;
  info.minutes = !minutes.empty();
  const bool counts_jobs = resource.find("Job") != std::string::npos;
  if (limit == "Max" && per.empty() && counts_jobs) info.per = "PerUser";  // AssocMaxJobsLimit
  const bool per_request = info.per == "PerJob" || info.per == "PerNode" || limit == "Min";
  info.kind = per_request ? ReasonKind::kLimitJob : ReasonKind::kLimitGroup;
  info.words = FamilyWords(info, scopes_.at(scope), res->second);
  info.known = true;
  return true;
}

ReasonInfo ReasonCatalogue::Lookup(std::string_view reason) const {
  ReasonInfo info;
  std::string_view code = Trim(reason);
  if (auto comma = code.find(','); comma != std::string_view::npos) {
    info.detail = std::string(Trim(code.substr(comma + 1)));
    code = Trim(code.substr(0, comma));
  }
  info.code = std::string(code);
  if (auto it = explicit_.find(info.code); it != explicit_.end()) {
    info.kind = it->second.kind;
    info.words = it->second.words;
    info.known = true;
    return info;
  }
  if (ReadFamily(info.code, info)) return info;
  info.words = info.code.empty() ? "Slurm gives no reason." : "Slurm's reason: " + info.code + ".";
  return info;
}

}  // namespace schedmate::service
