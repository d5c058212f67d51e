#pragma once
// Every subcommand group registers itself here; main.cc calls each once, in this order.
// One file per group: src/cli/<group>_command.cc.

#include <CLI/CLI.hpp>

namespace schedmate::cli {

void RegisterSimulateCommand(CLI::App& app);     // simulate            (sim/, policy/)
void RegisterWhatIfCommand(CLI::App& app);       // whatif, tune         (trace/, sim/, policy/)
void RegisterTraceCommands(CLI::App& app);       // trace stats|generate (trace/)
void RegisterLogsCommands(CLI::App& app);        // logs metrics         (tracker/)
void RegisterDiagnoseCommand(CLI::App& app);     // diagnose             (failure/)
void RegisterAdviseCommands(CLI::App& app);      // advise, history ...  (advisor/, store/)
void RegisterLlmCommands(CLI::App& app);         // llm check            (llm/)
void RegisterServeCommands(CLI::App& app);       // serve, slurm ...     (service/, slurm/, api/)
void RegisterWhyCommand(CLI::App& app);          // why JOBID            (service/, slurm/)
void RegisterCheckConfigCommand(CLI::App& app);  // check-config      (slurm/)
void RegisterReportCommand(CLI::App& app);       // report            (service/, store/)

}  // namespace schedmate::cli
