#include "cli/commands.h"

namespace schedmate::cli {

// Owned by the trace component's work; registers nothing until it lands.
void RegisterTraceCommands(CLI::App& /*app*/) {}

}  // namespace schedmate::cli
