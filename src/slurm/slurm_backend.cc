#include "slurm/slurm_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <fstream>

#include "core/strings.h"
#include "slurm/slurm_parsers.h"

namespace schedmate::slurm {

bool IsValidJobId(const std::string& job_id) {
  if (job_id.empty() || job_id.size() > 32) return false;
  int underscores = 0;
  for (char c : job_id) {
    if (c == '_') {
      ++underscores;
    } else if (!std::isdigit(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return underscores <= 1 && job_id.front() != '_' && job_id.back() != '_';
}

bool IsValidNodeName(const std::string& node) {
  if (node.empty() || node.size() > 128) return false;
  return std::all_of(node.begin(), node.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

SlurmBackend::SlurmBackend(CommandRunner& runner, SlurmBackendOptions options)
    : runner_(runner), options_(std::move(options)) {}

Result<CommandOutput> SlurmBackend::RunChecked(const std::vector<std::string>& argv) {
  SM_ASSIGN_OR_RETURN(CommandOutput out, runner_.Run(argv, options_.command_timeout));
  if (out.exit_code != 0) {
    std::string err(Trim(out.err.empty() ? out.out : out.err));
    if (err.size() > 500) err.resize(500);
    std::string msg = fmt::format("{} exited {}: {}", JoinArgv(argv), out.exit_code, err);
    if (IContains(err, "Invalid job id") || IContains(err, "Invalid node name")) {
      return Status::NotFound(msg);
    }
    if (IContains(err, "Unable to contact slurm controller") ||
        IContains(err, "Connection refused") || IContains(err, "Socket timed out")) {
      return Status::Unavailable(msg);
    }
    return Status::FailedPrecondition(msg);
  }
  return out;
}

Result<std::vector<SlurmJob>> SlurmBackend::ListJobs() {
  SM_ASSIGN_OR_RETURN(CommandOutput out, RunChecked({"squeue", "--json"}));
  return ParseSqueueJson(out.out);
}

Result<std::vector<SlurmNode>> SlurmBackend::ListNodes() {
  SM_ASSIGN_OR_RETURN(CommandOutput out, RunChecked({"sinfo", "--json"}));
  return ParseSinfoJson(out.out);
}

Result<SlurmJob> SlurmBackend::ShowJob(const std::string& job_id) {
  if (!IsValidJobId(job_id)) return Status::InvalidArgument("invalid job id: " + job_id);
  SM_ASSIGN_OR_RETURN(CommandOutput out,
                      RunChecked({"scontrol", "show", "job", "-d", "-o", job_id}));
  auto records = ParseScontrolRecords(out.out);
  if (records.empty()) return Status::NotFound("scontrol shows no job " + job_id);
  return SlurmJobFromScontrol(records.front());
}

Result<std::string> SlurmBackend::BatchScript(const std::string& job_id) {
  if (!IsValidJobId(job_id)) return Status::InvalidArgument("invalid job id: " + job_id);
  auto out = RunChecked({"scontrol", "write", "batch_script", job_id, "-"});
  if (!out.ok()) {
    if (out.status().code() == StatusCode::kFailedPrecondition) {
      return Status::NotFound(out.status().message());
    }
    return out.status();
  }
  return std::move(out->out);
}

Result<std::vector<FinishedJob>> SlurmBackend::ReadFinished(FinishedCursor& cursor) {
  if (options_.use_sacct) return ReadSacct(cursor);
  if (options_.jobcomp_path.empty()) return std::vector<FinishedJob>();
  return ReadJobcomp(cursor);
}

Result<std::vector<FinishedJob>> SlurmBackend::ReadJobcomp(FinishedCursor& cursor) {
  std::ifstream in(options_.jobcomp_path, std::ios::binary);
  if (!in) return std::vector<FinishedJob>();  // no job has finished yet: Slurm creates it lazily
  in.seekg(0, std::ios::end);
  int64_t size = static_cast<int64_t>(in.tellg());
  if (size < cursor.offset) cursor.offset = 0;  // rotated or truncated
  if (size == cursor.offset) return std::vector<FinishedJob>();
  int64_t want = std::min<int64_t>(size - cursor.offset,
                                   static_cast<int64_t>(options_.max_jobcomp_read_bytes));
  std::string data(static_cast<size_t>(want), '\0');
  in.seekg(cursor.offset);
  in.read(data.data(), want);
  data.resize(static_cast<size_t>(in.gcount()));
  size_t last_newline = data.rfind('\n');
  if (last_newline == std::string::npos) {
    if (static_cast<int64_t>(data.size()) >= want &&
        want == static_cast<int64_t>(options_.max_jobcomp_read_bytes)) {
      // One line longer than the read window: skip it rather than stall forever.
      cursor.offset += want;
      ++cursor.skipped_lines;
    }
    return std::vector<FinishedJob>();
  }
  data.resize(last_newline + 1);
  std::vector<FinishedJob> out;
  for (auto line : Split(data, '\n')) {
    if (Trim(line).empty()) continue;
    auto parsed = ParseJobcompLine(line);
    if (!parsed.ok()) {
      ++cursor.skipped_lines;
      continue;
    }
    if (parsed->has_value()) out.push_back(std::move(**parsed));
  }
  cursor.offset += static_cast<int64_t>(data.size());
  return out;
}

Result<std::vector<FinishedJob>> SlurmBackend::ReadSacct(FinishedCursor& cursor) {
  // sacct selects jobs by time window; start a little before the newest end seen, and let the
  // caller deduplicate by run key.
  std::string since = "now-1days";
  std::vector<std::string> argv = {"sacct", "-X", "-n", "-P", "-a", "-o", kSacctFormat, "-S"};
  if (cursor.offset > 0) {
    // sacct accepts "YYYY-MM-DDTHH:MM:SS"; print local time.
    time_t t = static_cast<time_t>(cursor.offset - 60);
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
    since = buf;
  }
  argv.push_back(since);
  argv.push_back("-s");
  argv.push_back("CD,F,TO,NF,CA,OOM,PR,BF,DL");
  SM_ASSIGN_OR_RETURN(CommandOutput out, RunChecked(argv));
  SM_ASSIGN_OR_RETURN(auto jobs, ParseSacctParsable(out.out));
  for (const auto& j : jobs) cursor.offset = std::max(cursor.offset, j.end.seconds());
  return jobs;
}

Status SlurmBackend::SetTimeLimit(const std::string& job_id, int64_t minutes) {
  if (!IsValidJobId(job_id)) return Status::InvalidArgument("invalid job id: " + job_id);
  if (minutes < 1) return Status::InvalidArgument("time limit must be at least 1 minute");
  return RunChecked({"scontrol", "update", "JobId=" + job_id, fmt::format("TimeLimit={}", minutes)})
      .status();
}

Status SlurmBackend::SetComment(const std::string& job_id, const std::string& comment) {
  if (!IsValidJobId(job_id)) return Status::InvalidArgument("invalid job id: " + job_id);
  return RunChecked({"scontrol", "update", "JobId=" + job_id, "Comment=" + comment}).status();
}

Status SlurmBackend::DrainNode(const std::string& node, const std::string& reason) {
  if (!IsValidNodeName(node)) return Status::InvalidArgument("invalid node name: " + node);
  std::string r = reason.empty() ? "schedmate" : reason;
  return RunChecked({"scontrol", "update", "NodeName=" + node, "State=DRAIN", "Reason=" + r})
      .status();
}

Status SlurmBackend::ResumeNode(const std::string& node) {
  if (!IsValidNodeName(node)) return Status::InvalidArgument("invalid node name: " + node);
  return RunChecked({"scontrol", "update", "NodeName=" + node, "State=RESUME"}).status();
}

std::string MergeSchedmateComment(std::string_view existing, std::string_view ours) {
  std::vector<std::string> parts;
  for (auto part : Split(existing, '|')) {
    std::string p(Trim(part));
    if (!p.empty() && !StartsWith(p, "schedmate")) parts.push_back(std::move(p));
  }
  if (!Trim(ours).empty()) parts.emplace_back(Trim(ours));
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += " | ";
    out += p;
  }
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == '"' || c == '\'') c = ' ';
  if (out.size() > 500) out.resize(500);
  return out;
}

std::string RelativeStartTime(Duration delay) {
  int64_t s = (delay.micros() + 999'999) / 1'000'000;
  return s <= 0 ? "now" : fmt::format("now+{}", s);
}

Result<ActionReport> SlurmBackend::Requeue(const std::string& job_id,
                                           const RequeueOptions& options) {
  if (!IsValidJobId(job_id)) return Status::InvalidArgument("invalid job id: " + job_id);
  for (const auto& n : options.exclude_nodes)
    if (!IsValidNodeName(n)) return Status::InvalidArgument("invalid node name: " + n);
  ActionReport report;
  auto requeued = RunChecked({"scontrol", "requeue", job_id});
  if (!requeued.ok()) {
    // "Job is pending execution": Slurm requeued it itself (NODE_FAIL); the updates still apply.
    if (!IContains(requeued.status().message(), "pending execution")) return requeued.status();
    report.already_pending = true;
  }
  const std::string job = "JobId=" + job_id;
  bool need_show = !options.exclude_nodes.empty() || !options.comment.empty();
  SlurmJob shown;
  if (need_show) {
    auto s = ShowJob(job_id);
    if (s.ok()) {
      shown = std::move(*s);
    } else {
      report.warnings.push_back("reading the job back: " + s.status().message());
    }
  }
  // A node the job asked for by name (sbatch -w) cannot be excluded: Slurm would keep the job
  // pending forever (Reason=BadConstraints).
  std::vector<std::string> exclude;
  for (const auto& n : options.exclude_nodes) {
    if (std::find(shown.required_nodes.begin(), shown.required_nodes.end(), n) !=
        shown.required_nodes.end()) {
      report.warnings.push_back("not excluding " + n + ": the job requires it (ReqNodeList)");
    } else {
      exclude.push_back(n);
    }
  }
  if (!exclude.empty()) {
    std::vector<std::string> all = shown.excluded_nodes;
    all.insert(all.end(), exclude.begin(), exclude.end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    std::string list;
    for (const auto& n : all) list += (list.empty() ? "" : ",") + n;
    Status s = RunChecked({"scontrol", "update", job, "ExcNodeList=" + list}).status();
    if (s.ok()) {
      report.excluded = std::move(all);
    } else {
      report.excluded = shown.excluded_nodes;
      report.warnings.push_back("excluding nodes: " + s.message());
    }
  }
  if (!options.comment.empty()) {
    std::string c = MergeSchedmateComment(shown.comment, options.comment);
    Status s = RunChecked({"scontrol", "update", job, "Comment=" + c}).status();
    if (!s.ok()) report.warnings.push_back("setting the comment: " + s.message());
  }
  Status s =
      RunChecked({"scontrol", "update", job, "StartTime=" + RelativeStartTime(options.delay)})
          .status();
  if (!s.ok()) {
    report.warnings.push_back("setting the release time (Slurm's own ~120 s delay applies): " +
                              s.message());
  }
  return report;
}

Result<ActionReport> SlurmBackend::HoldForReview(const std::string& job_id,
                                                 const std::string& comment) {
  if (!IsValidJobId(job_id)) return Status::InvalidArgument("invalid job id: " + job_id);
  ActionReport report;
  auto held = RunChecked({"scontrol", "requeuehold", job_id});
  if (!held.ok()) {
    if (!IContains(held.status().message(), "pending execution")) return held.status();
    report.already_pending = true;
    // A job that is held already stays so (in 22.05 `scontrol hold` on a job requeued held
    // gives it its priority back).
    auto now = ShowJob(job_id);
    bool held_already = now.ok() && now->priority == 0;
    if (!held_already) SM_RETURN_IF_ERROR(RunChecked({"scontrol", "hold", job_id}).status());
  }
  if (!comment.empty()) {
    auto shown = ShowJob(job_id);
    std::string c = MergeSchedmateComment(shown.ok() ? shown->comment : "", comment);
    Status s = RunChecked({"scontrol", "update", "JobId=" + job_id, "Comment=" + c}).status();
    if (!s.ok()) report.warnings.push_back("setting the comment: " + s.message());
  }
  return report;
}

Status SlurmBackend::StartNow(const std::string& job_id) {
  if (!IsValidJobId(job_id)) return Status::InvalidArgument("invalid job id: " + job_id);
  return RunChecked({"scontrol", "update", "JobId=" + job_id, "StartTime=now"}).status();
}

Status SlurmBackend::SetPriority(const std::string& job_id, int64_t priority) {
  if (!IsValidJobId(job_id)) return Status::InvalidArgument("invalid job id: " + job_id);
  if (priority < 1 || priority > 4294967293) {
    return Status::InvalidArgument(fmt::format("priority {} outside 1..4294967293", priority));
  }
  return RunChecked({"scontrol", "update", "JobId=" + job_id, fmt::format("Priority={}", priority)})
      .status();
}

Result<std::string> SlurmBackend::ConfigValue(std::string_view key) {
  SM_ASSIGN_OR_RETURN(CommandOutput out, RunChecked({"scontrol", "show", "config"}));
  for (auto line : Split(out.out, '\n')) {
    std::string_view l = Trim(line);
    auto eq = l.find('=');
    if (eq == std::string_view::npos || Trim(l.substr(0, eq)) != key) continue;
    return std::string(Trim(l.substr(eq + 1)));
  }
  return Status::NotFound(fmt::format("scontrol show config: no {}", key));
}

Result<std::string> SlurmBackend::PriorityType() { return ConfigValue("PriorityType"); }

Result<std::vector<std::string>> SlurmBackend::ComputedPriorityJobs() {
  SM_ASSIGN_OR_RETURN(CommandOutput out, RunChecked({"sprio", "-h", "-o", "%i"}));
  std::vector<std::string> ids;
  for (auto line : Split(out.out, '\n')) {
    std::string id(Trim(line));
    if (IsValidJobId(id)) ids.push_back(std::move(id));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

Result<std::vector<QosLimits>> SlurmBackend::ListQos() {
  SM_ASSIGN_OR_RETURN(CommandOutput out, RunChecked({"sacctmgr", "-P", "show", "qos",
                                                     std::string("format=") + kQosFormat}));
  return ParseSacctmgrQos(out.out);
}

Result<std::vector<AssocLimits>> SlurmBackend::ListAssociations() {
  SM_ASSIGN_OR_RETURN(std::string cluster, ConfigValue("ClusterName"));
  SM_ASSIGN_OR_RETURN(CommandOutput out,
                      RunChecked({"sacctmgr", "-P", "show", "assoc", "where", "cluster=" + cluster,
                                  std::string("format=") + kAssocFormat}));
  return ParseSacctmgrAssoc(out.out);
}

Result<std::vector<StepUsage>> SlurmBackend::JobStepUsage(const std::string& job_id) {
  if (!IsValidJobId(job_id)) return Status::InvalidArgument("not a job id: " + job_id);
  SM_ASSIGN_OR_RETURN(CommandOutput out, RunChecked({"sstat", "-n", "-P", "--allsteps", "-j",
                                                     job_id, "-o", kSstatFormat}));
  return ParseSstat(out.out);
}

Result<std::map<std::string, std::vector<int>>> SlurmBackend::JobGpuIndices(
    const std::string& job_id) {
  if (!IsValidJobId(job_id)) return Status::InvalidArgument("not a job id: " + job_id);
  SM_ASSIGN_OR_RETURN(CommandOutput out, RunChecked({"scontrol", "show", "job", "-d", job_id}));
  return ParseJobGpuIndices(out.out);
}

Result<CommandOutput> SlurmBackend::RunInJob(const std::string& job_id, const std::string& node,
                                             const std::vector<std::string>& argv,
                                             Duration timeout) {
  if (!IsValidJobId(job_id)) return Status::InvalidArgument("not a job id: " + job_id);
  if (!IsValidNodeName(node)) return Status::InvalidArgument("not a node name: " + node);
  if (argv.empty()) return Status::InvalidArgument("RunInJob: empty command");
  std::vector<std::string> full = {
      "srun", "--jobid=" + job_id, "--overlap", "-N1", "-n1", "-w", node, "--quiet"};
  full.insert(full.end(), argv.begin(), argv.end());
  return runner_.Run(full, timeout);
}

Status SlurmBackend::Hold(const std::string& job_id) {
  if (!IsValidJobId(job_id)) return Status::InvalidArgument("invalid job id: " + job_id);
  return RunChecked({"scontrol", "hold", job_id}).status();
}

Status SlurmBackend::Release(const std::string& job_id) {
  if (!IsValidJobId(job_id)) return Status::InvalidArgument("invalid job id: " + job_id);
  return RunChecked({"scontrol", "release", job_id}).status();
}

}  // namespace schedmate::slurm
