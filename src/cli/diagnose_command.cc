// schedmate diagnose: locate the root cause of a failed job's log, classify it (infrastructure vs
// application) and print a recovery plan. Also `--learn` to add a resolved failure to the site's
// examples. Wires failure/ together; all logic lives there.

#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/engine_util.h"
#include "cli/flags_util.h"
#include "core/strings.h"
#include "failure/diagnosis_json.h"
#include "failure/example_store.h"
#include "failure/failure_handler.h"
#include "failure/llm_failure_classifier.h"
#include "failure/log_view.h"
#include "failure/recovery_planner.h"
#include "failure/signature_set.h"
#include "llm/llm_setup.h"

namespace schedmate::cli {

namespace {

using namespace schedmate::failure;

struct DiagnoseArgs {
  std::string file;
  bool json = false;
  int64_t context = 500;
  std::vector<std::string> signature_files;
  std::string examples;
  bool no_examples = false;
  std::string nodes;
  std::string job_id;
  int restarts = 0;
  int max_retries = 3;
  std::string job_dir;
  std::string learn;
  std::string label;
  std::string category;
  EngineFlags engine;
  bool llm_judge = false;
};

// The examples path: --examples, else $SCHEDMATE_FAILURE_EXAMPLES, else
// $XDG_DATA_HOME/schedmate/failure_examples.jsonl (~/.local/share/... without XDG_DATA_HOME).
std::string DefaultExamplesPath() {
  if (const char* env = std::getenv("SCHEDMATE_FAILURE_EXAMPLES"); env && *env) return env;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) {
    return std::string(xdg) + "/schedmate/failure_examples.jsonl";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::string(home) + "/.local/share/schedmate/failure_examples.jsonl";
  }
  return "";
}

// "a,b,gpu[01-03,7]" -> a, b, gpu01, gpu02, gpu03, gpu7 (Slurm hostlist brackets).
Result<std::vector<std::string>> ExpandNodeList(std::string_view list) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < list.size()) {
    size_t j = i;
    int depth = 0;
    while (j < list.size() && (depth > 0 || list[j] != ',')) {
      if (list[j] == '[') ++depth;
      if (list[j] == ']') --depth;
      ++j;
    }
    std::string_view item = Trim(list.substr(i, j - i));
    i = j + 1;
    if (item.empty()) continue;
    size_t lb = item.find('[');
    if (lb == std::string_view::npos) {
      out.emplace_back(item);
      continue;
    }
    size_t rb = item.find(']', lb);
    if (rb == std::string_view::npos) {
      return Status::InvalidArgument("--nodes: unbalanced '[' in '" + std::string(item) + "'");
    }
    std::string prefix(item.substr(0, lb));
    std::string suffix(item.substr(rb + 1));
    for (std::string_view range : Split(item.substr(lb + 1, rb - lb - 1), ',')) {
      range = Trim(range);
      size_t dash = range.find('-');
      std::string_view a = range.substr(0, dash);
      std::string_view b = dash == std::string_view::npos ? a : range.substr(dash + 1);
      auto lo = ParseInt(a);
      auto hi = ParseInt(b);
      if (!lo || !hi || *lo > *hi || *hi - *lo > 100000) {
        return Status::InvalidArgument("--nodes: bad range '" + std::string(range) + "'");
      }
      for (int64_t v = *lo; v <= *hi; ++v) {
        std::string num = std::to_string(v);
        while (num.size() < a.size()) num = "0" + num;  // keep zero padding
        out.push_back(prefix + num + suffix);
      }
    }
  }
  return out;
}

Result<SignatureSet> LoadSignatures(const DiagnoseArgs& args) {
  SignatureSet set;
  SM_RETURN_IF_ERROR(set.AddYaml(BuiltinSignatureYaml(), "builtin:failure_signatures.yaml"));
  for (const auto& f : args.signature_files) SM_RETURN_IF_ERROR(set.AddFile(f));
  SM_RETURN_IF_ERROR(set.Compile());
  return set;
}

void PrintHuman(const std::string& file, const Diagnosis& d, const RecoveryPlan& plan) {
  std::cout << file << "\n";
  if (!d.root_cause) {
    std::cout << "  no failure found (label: unknown)\n";
  } else {
    std::cout << "  root cause: line " << d.root_cause->line_no << ": " << d.root_cause->text
              << "\n";
    char conf[16];
    std::snprintf(conf, sizeof(conf), "%.2f", d.confidence);
    std::cout << "  label:      " << FailureLabelName(d.label) << " / " << d.category
              << " (confidence " << conf << ")\n";
    if (!d.explanation.empty()) std::cout << "  why:        " << d.explanation << "\n";
    if (!d.evidence.empty()) {
      std::cout << "  evidence:\n";
      for (const auto& e : d.evidence) {
        std::cout << "    line " << e.line_no << " [" << e.source << "] " << e.text << "\n";
      }
    }
    if (!d.nodes.empty()) {
      std::cout << "  nodes:     ";
      for (const auto& n : d.nodes) std::cout << " " << n;
      std::cout << "\n";
    }
    if (d.checkpoint) std::cout << "  checkpoint: " << *d.checkpoint << "\n";
    std::cout << "  context:    lines " << d.context_first_line << "-" << d.context_last_line
              << "\n";
  }
  std::cout << "  plan:\n";
  int i = 0;
  for (const auto& a : plan) {
    std::cout << "    " << ++i << ". " << RecoveryActionKindName(a.kind);
    if (!a.node.empty()) std::cout << " " << a.node;
    if (a.kind == RecoveryAction::Kind::kRequeue) {
      std::cout << " (attempt " << a.attempt << ", after " << FormatDuration(a.delay);
      if (a.checkpoint) std::cout << ", from " << *a.checkpoint;
      std::cout << ")";
    }
    std::cout << ": " << a.reason << "\n";
    if (!a.hint.empty()) std::cout << "       hint: " << a.hint << "\n";
  }
  std::cout << "  classifier calls: " << d.classifier_calls << " (" << d.engine << ")\n";
}

void RunLearn(const DiagnoseArgs& args) {
  auto label = ParseFailureLabel(args.label);
  if (!label || *label == FailureLabel::kUnknown) {
    FailUsage("--learn needs --label infrastructure or --label application");
  }
  std::string path = args.examples.empty() ? DefaultExamplesPath() : args.examples;
  if (path.empty()) FailUsage("--learn: no examples path; pass --examples FILE");
  auto sigs = LoadSignatures(args);
  if (!sigs.ok()) Fail(sigs.status());
  FailureHandler handler(*sigs, /*examples=*/nullptr);
  // Read again when the log is truncated or rewritten while it is read (log rotation).
  auto ex = LogView::ReadStable<FailureExample>(
      args.learn, [&](const LogView& log) -> Result<FailureExample> {
        auto made = handler.MakeExample(log, *label, args.category);
        if (!made.ok()) return made.status().WithContext(args.learn);
        return made;
      });
  if (!ex.ok()) Fail(ex.status());
  Status st = ExampleStore::Append(path, *ex);
  if (!st.ok()) Fail(st);
  if (args.json) {
    nlohmann::json j = ExampleToJson(*ex);
    j["learned"] = true;
    j["examples"] = ToValidUtf8(path);
    PrintJson(j);
  } else {
    std::cout << "learned " << FailureLabelName(ex->label)
              << (ex->category.empty() ? "" : "/" + ex->category) << " from " << args.learn
              << " -> " << path << "\n  features: " << ex->text << "\n";
  }
}

void RunDiagnose(const DiagnoseArgs& args) {
  if (args.learn.empty() && args.file.empty()) FailUsage("diagnose: a log FILE is required");
  if (!args.learn.empty()) {
    RunLearn(args);
    return;
  }
  auto sigs = LoadSignatures(args);
  if (!sigs.ok()) Fail(sigs.status());

  ExampleStore examples;
  if (!args.no_examples) {
    std::string path = args.examples.empty() ? DefaultExamplesPath() : args.examples;
    if (!path.empty()) {
      Status st = examples.Load(path);
      // The default path need not exist; an explicit --examples must.
      if (!st.ok() && (st.code() != StatusCode::kNotFound || !args.examples.empty())) Fail(st);
    }
  }

  JobContext job;
  job.job_id = args.job_id;
  job.restarts = args.restarts;
  if (!args.nodes.empty()) {
    auto nodes = ExpandNodeList(args.nodes);
    if (!nodes.ok()) FailUsage(nodes.status().message());
    job.nodes = *nodes;
  }
  if (!args.job_dir.empty()) {
    auto ckpt = FindLatestCheckpointInDir(args.job_dir);
    if (!ckpt.ok()) Fail(ckpt.status());
    job.checkpoint = *ckpt;
  }
  RecoveryPolicy policy;
  policy.max_infra_retries = args.max_retries;

  FailureHandlerOptions options;
  options.locator.context_lines = args.context;
  // The built-in diagnosis first; the LLM classifies the located window only when the engine
  // rule asks for it (cli/engine_util.h): --engine llm always, --engine auto only for a diagnosis
  // whose confidence is below --llm-below (no failure found counts as 0). Any LLM failure keeps
  // the built-in answer.
  std::unique_ptr<EngineContext> engine = EngineContext::Resolve(args.engine);
  auto diagnose = [&](const LogView& log) -> Result<Diagnosis> {
    FailureHandler handler(*sigs, examples.size() > 0 ? &examples : nullptr, options);
    Result<Diagnosis> builtin = handler.Diagnose(log);
    if (engine->Consult(builtin.ok() ? builtin->confidence : 0.0)) {
      Result<Diagnosis> d =
          DiagnoseWithLlm(engine->setup()->chat(), engine->model(), *sigs,
                          examples.size() > 0 ? &examples : nullptr, options, log, args.llm_judge);
      if (d.ok()) return d;
      engine->Fallback(d.status(), "diagnose");
    }
    if (!builtin.ok()) return builtin.status().WithContext(args.file);
    return builtin;
  };
  // A log truncated or rewritten while it is read (logrotate copytruncate) reads as zeros past its
  // new end, never SIGBUS; the diagnosis is then thrown away and the log read again.
  Result<Diagnosis> diagnosis = LogView::ReadStable<Diagnosis>(args.file, diagnose);
  if (!diagnosis.ok()) Fail(diagnosis.status());
  diagnosis->engine = engine->engine();
  RecoveryPlan plan = PlanRecovery(*diagnosis, job, policy);
  if (args.json) {
    nlohmann::json j = DiagnosisToJson(*diagnosis);
    j["plan"] = PlanToJson(plan);
    j["file"] = ToValidUtf8(args.file);
    PrintJson(j);
  } else {
    PrintHuman(args.file, *diagnosis, plan);
  }
}

}  // namespace

void RegisterDiagnoseCommand(CLI::App& app) {
  auto [cmd, args] = AddCommand<DiagnoseArgs>(
      app, "diagnose",
      "Find the root-cause line of a failed job's log, classify it as infrastructure or "
      "application, and plan the recovery",
      RunDiagnose);
  cmd->add_option("file", args->file, "The failed job's log file");
  AddJsonFlag(cmd, args->json, "Print the diagnosis and plan as JSON");
  cmd->add_option("--context", args->context, "Lines of context reported around the root cause")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--signatures", args->signature_files,
                  "Extra signature YAML file (repeatable); entries with an existing id replace it");
  cmd->add_option("--examples", args->examples,
                  "Labelled examples (.jsonl file or directory of them) for the nearest-neighbour "
                  "model; default $SCHEDMATE_FAILURE_EXAMPLES or "
                  "~/.local/share/schedmate/failure_examples.jsonl");
  cmd->add_flag("--no-examples", args->no_examples, "Ignore the examples file");
  cmd->add_option("--nodes", args->nodes,
                  "The job's nodes, comma-separated, Slurm brackets allowed (gpu[01-04])");
  cmd->add_option("--job-id", args->job_id, "The job's id (for the plan)");
  cmd->add_option("--restarts", args->restarts, "How often the job was requeued already")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--max-retries", args->max_retries,
                  "Infrastructure requeues before the job is held for a person")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--job-dir", args->job_dir,
                  "The job's output directory: its newest checkpoint is used for the requeue");
  cmd->add_option("--learn", args->learn,
                  "Learn from this resolved failure log: append its example to the examples file");
  cmd->add_option("--label", args->label, "With --learn: infrastructure or application");
  cmd->add_option("--category", args->category, "With --learn: a category name (optional)");
  AddEngineFlags(cmd, args->engine);
  cmd->add_flag("--llm-judge", args->llm_judge,
                "With the LLM engine, also let the LLM judge lines during the root-cause search "
                "(more model calls; large chunks still use the built-in rules)");
}

}  // namespace schedmate::cli
