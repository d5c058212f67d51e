#include "cli/commands.h"

namespace schedmate::cli {

// Owned by the logs component's work; registers nothing until it lands.
void RegisterLogsCommands(CLI::App& /*app*/) {}

}  // namespace schedmate::cli
