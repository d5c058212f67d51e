// schedmate: the command-line entry point. Wires concrete components together; all logic lives
// in the component libraries.

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/cli_util.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "schedmate: a semantic-aware scheduling companion for GPU clusters.\n"
      "Reads what schedulers ignore (job code, running logs, past jobs) and turns it into\n"
      "duration estimates, progress metrics, failure diagnoses and better scheduling.",
      "schedmate"};
  app.set_version_flag("--version", "schedmate 0.1.0");
  app.require_subcommand(1);
  app.fallthrough(false);

  using namespace schedmate::cli;
  RegisterSimulateCommand(app);
  RegisterWhatIfCommand(app);
  RegisterTraceCommands(app);
  RegisterLogsCommands(app);
  RegisterDiagnoseCommand(app);
  RegisterAdviseCommands(app);
  RegisterLlmCommands(app);
  RegisterServeCommands(app);
  RegisterWhyCommand(app);
  RegisterCheckConfigCommand(app);
  RegisterReportCommand(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "schedmate: internal error: " << e.what() << "\n";
    return 70;
  }
  return 0;
}
