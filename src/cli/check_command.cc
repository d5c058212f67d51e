// schedmate check-config: configuration checks of slurm.conf and gres.conf (slurm/conf_checks.h).
//
//   schedmate check-config                      $SLURM_CONF (else /etc/slurm/slurm.conf) and the
//                                               gres.conf beside it
//   schedmate check-config --slurm-conf F [--gres-conf G] [--json]
//
// Exit status: 0 when nothing of severity "error" was found, 1 otherwise or when a file cannot
// be read.

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "core/file_util.h"
#include "slurm/conf_checks.h"

namespace schedmate::cli {
namespace {

struct CheckArgs {
  std::string slurm_conf;
  std::string gres_conf;
  bool json = false;
};

void RunCheck(const CheckArgs& args) {
  CheckArgs a = args;
  if (a.slurm_conf.empty()) {
    const char* env = std::getenv("SLURM_CONF");
    a.slurm_conf = env != nullptr ? env : "/etc/slurm/slurm.conf";
  }
  std::string gres_text;
  if (a.gres_conf.empty()) {
    auto beside = std::filesystem::path(a.slurm_conf).parent_path() / "gres.conf";
    if (std::filesystem::exists(beside)) a.gres_conf = beside.string();
  }
  Result<std::string> conf = ReadFileToString(a.slurm_conf);
  if (!conf.ok()) Fail(conf.status());
  if (!a.gres_conf.empty()) {
    Result<std::string> gres = ReadFileToString(a.gres_conf);
    if (!gres.ok()) Fail(gres.status());
    gres_text = std::move(gres).value();
  }
  auto findings = slurm::CheckSlurmConf(*conf, a.slurm_conf, gres_text,
                                        a.gres_conf.empty() ? "gres.conf" : a.gres_conf);
  bool errors = false;
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : findings) {
    errors = errors || f.severity == "error";
    if (a.json) {
      out.push_back({{"check", f.check},
                     {"severity", f.severity},
                     {"file", f.file},
                     {"line", f.line},
                     {"subject", f.subject},
                     {"evidence", f.evidence},
                     {"suggestion", f.suggestion}});
    } else {
      std::cout << f.file << ":" << f.line << ": " << f.severity << ": " << f.check << ": "
                << f.evidence << "\n  suggestion: " << f.suggestion << "\n";
    }
  }
  if (a.json) {
    std::cout << out.dump(2) << "\n";
  } else if (findings.empty()) {
    std::cout << a.slurm_conf << ": no findings\n";
  }
  if (errors) std::exit(1);
}

}  // namespace

void RegisterCheckConfigCommand(CLI::App& app) {
  auto [cmd, args] = AddCommand<CheckArgs>(
      app, "check-config",
      "Check slurm.conf and gres.conf for settings that waste GPUs or hide jobs (GPUs Slurm does "
      "not schedule, partitions without nodes, backfill off, unlimited default time limits)",
      RunCheck);
  cmd->add_option("--slurm-conf", args->slurm_conf,
                  "slurm.conf to check (default: $SLURM_CONF, else /etc/slurm/slurm.conf)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--gres-conf", args->gres_conf,
                  "gres.conf to check (default: the one beside slurm.conf, when present)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--json", args->json, "Print the findings as JSON");
}

}  // namespace schedmate::cli
