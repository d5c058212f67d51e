// `schedmate llm check`: probe the configured OpenAI-compatible endpoint(s) and report what works.

#include <iostream>
#include <optional>
#include <string>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/flags_util.h"
#include "llm/llm_check.h"
#include "llm/llm_setup.h"

namespace schedmate::cli {

namespace {

struct LlmCheckOptions {
  std::string config_path;
  bool json = false;
  bool strict = false;
};

void RunLlmCheck(const LlmCheckOptions& opts) {
  std::optional<std::string> path;
  if (!opts.config_path.empty()) path = opts.config_path;
  auto setup = llm::LoadLlmSetup(path);
  if (!setup.ok()) Fail(setup.status());
  if (!(*setup)->chat_configured()) {
    Fail(Status::FailedPrecondition(
        (*setup)->config().backend == "none"
            ? "the LLM is disabled (backend: none in " + (*setup)->config().source + ")"
            : "no LLM configured: set SCHEDMATE_LLM_BASE_URL and SCHEDMATE_LLM_MODEL, or pass "
              "--llm-config FILE (see config/llm.example.yaml)"));
  }
  const llm::LlmCheckReport report = llm::RunLlmCheck(**setup);
  if (opts.json) {
    PrintJson(llm::LlmCheckReportToJson(report));
  } else {
    std::cout << llm::FormatLlmCheckTable(report);
  }
  if (!report.chat_status.ok()) {
    const bool unreachable = report.chat_status.IsRetryable();
    Fail(Status(report.chat_status.code(),
                (unreachable ? "LLM endpoint unreachable: " : "LLM endpoint not usable: ") +
                    report.chat_status.message()));
  }
  if (opts.strict && !report.all_ok()) {
    Fail(Status::FailedPrecondition("some LLM checks failed (--strict)"));
  }
}

}  // namespace

void RegisterLlmCommands(CLI::App& app) {
  CLI::App* llm_app =
      AddCommandGroup(app, "llm", "Inspect the optional LLM and embedding endpoints.");
  auto [check, opts] = AddCommand<LlmCheckOptions>(
      *llm_app, "check",
      "Probe the configured OpenAI-compatible endpoint: chat, streaming, tool calls, json_schema "
      "output, embeddings, latency. Exit 1 when the chat endpoint is unreachable or unusable.",
      RunLlmCheck);
  AddLlmConfigFlag(check, opts->config_path);
  AddJsonFlag(check, opts->json, "Print the report as JSON instead of a table");
  check->add_flag("--strict", opts->strict,
                  "Also exit 1 when any capability check (stream, tool calls, json_schema, "
                  "embeddings) fails");
}

}  // namespace schedmate::cli
