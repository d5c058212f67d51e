// schedmate why JOBID: why a job is not starting, and what would let it start sooner.
//
//   schedmate why 42                 asks a running `schedmate serve` (GET /v1/jobs/42/why at
//                                    --api, default http://127.0.0.1:8787): the full answer, with
//                                    the advisor's predictions, tracker ETAs and start estimates
//   schedmate why 42 --slurm         reads squeue/sinfo directly (no service needed): the same
//                                    explanation from Slurm's own state; running jobs' ends come
//                                    from their time limits and start estimates from Slurm's
//   --json                           the answer as JSON (service/why.h WhyAnswerToJson)
//   --engine builtin|llm|auto        llm/auto: the explanation rephrased by the configured model
//                                    from the structured answer only, and checked against it
//                                    (service/why_rephrase.h); "explanation_source" says which
//                                    text it is ("builtin", "llm (MODEL)", or the fallback reason)
//
// Exit status: 0 with an answer, 1 when the job or the service cannot be found.

#include <fmt/format.h>
#include <httplib.h>

#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "api/json_codecs.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/engine_util.h"
#include "cli/flags_util.h"
#include "core/clock.h"
#include "core/strings.h"
#include "llm/engine.h"
#include "llm/llm_setup.h"
#include "service/start_estimator.h"
#include "service/why.h"
#include "service/why_rephrase.h"
#include "slurm/command_runner.h"
#include "slurm/slurm_backend.h"

namespace schedmate::cli {
namespace {

struct WhyArgs {
  std::string job_id;
  std::string api = "http://127.0.0.1:8787";
  std::string cluster;  // the service's cluster (slurm.clusters) the job is on ("" = any)
  bool slurm = false;
  bool json = false;
  EngineFlags engine;
};

// The answer from a running service.
Result<nlohmann::json> AskService(const WhyArgs& a) {
  httplib::Client client(a.api);
  client.set_connection_timeout(5);
  client.set_read_timeout(30);
  httplib::Params params;
  if (!a.cluster.empty()) params.emplace("cluster", a.cluster);
  auto res = client.Get("/v1/jobs/" + a.job_id + "/why", params, httplib::Headers{});
  if (!res) {
    return Status::Unavailable(
        fmt::format("no schedmate service answers at {} ({}); start "
                    "`schedmate serve` or use --slurm",
                    a.api, httplib::to_string(res.error())));
  }
  auto body = nlohmann::json::parse(res->body, nullptr, false);
  if (res->status == 404) {
    return Status::NotFound("job " + a.job_id + ": not in the queue" +
                            (body.is_object() && body.value("code", "") == "unknown_cluster"
                                 ? " (" + body.value("error", "") + ")"
                                 : ""));
  }
  if (res->status == 409 && body.is_object() && body.contains("clusters")) {
    return Status::FailedPrecondition(
        fmt::format("job {} is live on clusters {}: name one with --cluster", a.job_id,
                    body["clusters"].dump()));
  }
  if (res->status != 200 || body.is_discarded()) {
    return Status::Unavailable(
        fmt::format("{} answered HTTP {}: {}", a.api, res->status, res->body.substr(0, 200)));
  }
  return body;
}

// Start estimates as Slurm's backfill makes them: its own guess where it has one, else the
// companion's fast-forward with every job running for its whole time limit (what backfill
// assumes; 1 hour for a job without one).
void EstimateStarts(service::ServiceView& view, SimTime now) {
  std::vector<service::NodeCapacity> caps;
  for (const auto& n : view.nodes) caps.push_back({n.name, n.gpus_total, n.available()});
  std::vector<service::RunningJobLoad> running;
  std::vector<service::PendingJobRequest> pending;
  for (const auto& v : view.jobs) {
    const slurm::SlurmJob& j = v.job;
    const Duration limit =
        j.time_limit_min ? Duration::Minutes(*j.time_limit_min) : Duration::Hours(1);
    if (j.state == "RUNNING" && j.start) {
      running.push_back({j.id, j.node_names, j.gpus_per_node, *j.start, limit, limit});
    } else if (j.state == "PENDING") {
      pending.push_back({j.id, j.priority, j.submit, std::max(1, j.nodes), j.gpus_per_node, limit,
                         j.reason, j.eligible, j.excluded_nodes});
    }
  }
  std::map<std::string, service::StartEstimate> ours;
  for (auto& e : service::StartTimeEstimator().Estimate(now, caps, running, std::move(pending))) {
    ours[e.job_id] = std::move(e);
  }
  for (auto& v : view.jobs) {
    if (v.job.state != "PENDING") continue;
    if (v.job.expected_start) {
      v.start_estimate =
          service::StartEstimate{v.job.id, v.job.expected_start, {}, v.job.reason, "slurm"};
    } else if (auto it = ours.find(v.job.id); it != ours.end()) {
      v.start_estimate = it->second;
    }
  }
}

// The answer from Slurm's own state, without the service. `names` gets the cluster's partitions,
// nodes and users (what a rephrased explanation must not name unless the answer does).
Result<nlohmann::json> AskSlurm(const WhyArgs& a, std::vector<std::string>& names) {
  slurm::SubprocessCommandRunner runner;
  slurm::SlurmBackend backend(runner, {});
  SM_ASSIGN_OR_RETURN(std::vector<slurm::SlurmJob> jobs, backend.ListJobs());
  SM_ASSIGN_OR_RETURN(std::vector<slurm::SlurmNode> nodes, backend.ListNodes());
  const SimTime now = SystemClock().Now();
  service::ServiceView view;
  view.nodes = std::move(nodes);
  for (const auto& n : view.nodes) {
    names.push_back(n.name);
    names.insert(names.end(), n.partitions.begin(), n.partitions.end());
  }
  for (auto& j : jobs) {
    names.push_back(j.partition);
    names.push_back(j.user);
    service::JobView v;
    v.job = std::move(j);
    view.jobs.push_back(std::move(v));
  }
  for (const auto& v : view.jobs) {
    if (v.job.id != a.job_id) continue;
    // Without slurmdbd: none, and why names no value.
    if (StartsWith(v.job.reason, "QOS")) {
      if (auto qos = backend.ListQos(); qos.ok()) view.qos = std::move(*qos);
    }
    if (StartsWith(v.job.reason, "Assoc")) {
      if (auto assocs = backend.ListAssociations(); assocs.ok()) view.assocs = std::move(*assocs);
    }
  }
  EstimateStarts(view, now);
  SM_ASSIGN_OR_RETURN(service::WhyAnswer answer, service::ExplainJob(view, a.job_id, now));
  return service::WhyAnswerToJson(answer);
}

std::string When(const nlohmann::json& t) {
  if (!t.is_number_integer()) return "unknown";
  const SimTime at = SimTime::FromSeconds(t.get<int64_t>());
  const Duration d = at - SystemClock().Now();
  return api::IsoUtc(at) + (d > Duration::Zero() ? " (in " + FormatDuration(d) + ")" : " (now)");
}

void PrintAnswer(const nlohmann::json& j) {
  std::cout << "job " << j.value("job_id", "") << ": " << j.value("state", "");
  if (!j.value("reason_code", "").empty())
    std::cout << " (" << j["reason_code"].get<std::string>() << ")";
  std::cout << "\n" << j.value("explanation", "") << "\n";
  if (const std::string source = j.value("explanation_source", "builtin"); source != "builtin")
    std::cout << "(explanation: " << source << ")\n";
  if (j.contains("evidence") && !j["evidence"].empty()) {
    std::cout << "evidence:\n";
    for (const auto& e : j["evidence"]) std::cout << "  - " << e.value("text", "") << "\n";
  }
  if (j.value("state", "") == "PENDING") {
    std::cout << "expected start: " << When(j.value("expected_start", nlohmann::json())) << "\n";
  }
  if (j.contains("suggestions") && !j["suggestions"].empty()) {
    std::cout << "what would help:\n";
    for (const auto& s : j["suggestions"]) {
      std::cout << "  - " << s.value("change", "") << ": start "
                << When(s.value("expected_start", nlohmann::json())) << "; " << s.value("why", "")
                << "\n";
    }
  }
}

// Rephrases the explanation when the engine says so (a service's own rephrasing is kept).
void Explain(const WhyArgs& a, nlohmann::json& answer, const std::vector<std::string>& names) {
  if (StartsWith(answer.value("explanation_source", ""), "llm")) return;
  std::unique_ptr<EngineContext> engine = EngineContext::Resolve(a.engine);
  if (!engine->use_llm()) {
    service::SetExplanation(answer, std::nullopt, engine->engine());
    return;
  }
  service::WhyRephraseOptions options;
  options.known_names = names;
  Result<std::string> text = service::RephraseWhy(answer, engine->setup()->chat(), options);
  if (text.ok()) {
    service::SetExplanation(answer, *text, llm::LlmEngineLabel(engine->model()));
  } else {
    service::SetExplanation(answer, std::nullopt, engine->Fallback(text.status(), "why"));
  }
}

void RunWhy(const WhyArgs& a) {
  std::vector<std::string> names;
  Result<nlohmann::json> answer = a.slurm ? AskSlurm(a, names) : AskService(a);
  if (!answer.ok()) Fail(answer.status());
  Explain(a, *answer, names);
  if (a.json) {
    std::cout << answer->dump(2) << "\n";
  } else {
    PrintAnswer(*answer);
  }
}

}  // namespace

void RegisterWhyCommand(CLI::App& app) {
  auto [cmd, args] = AddCommand<WhyArgs>(
      app, "why",
      "Why a job is not starting: Slurm's reason in plain words, the evidence, and "
      "changes that would let it start sooner",
      RunWhy);
  cmd->add_option("job_id", args->job_id, "The Slurm job id (123, or 123_4 for an array task)")
      ->required()
      ->check(CLI::Validator(
          [](std::string& id) {
            return slurm::IsValidJobId(id) ? std::string() : "not a Slurm job id: " + id;
          },
          "JOBID"));
  auto* api = cmd->add_option("--api", args->api, "URL of a running `schedmate serve`")
                  ->capture_default_str();
  auto* slurm_flag = cmd->add_flag("--slurm", args->slurm,
                                   "Read squeue/sinfo directly instead of asking the service")
                         ->excludes(api);
  cmd->add_option("--cluster", args->cluster,
                  "The service's cluster the job is on (slurm.clusters; needed when the id is "
                  "live on several)")
      ->excludes(slurm_flag);
  AddJsonFlag(cmd, args->json, "Print the answer as JSON");
  AddEngineFlags(cmd, args->engine, /*confidence_gate=*/false);
}

}  // namespace schedmate::cli
