#include "cli/commands.h"

namespace schedmate::cli {

// Owned by the serve component's work; registers nothing until it lands.
void RegisterServeCommands(CLI::App& /*app*/) {}

}  // namespace schedmate::cli
