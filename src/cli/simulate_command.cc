#include "cli/commands.h"

namespace schedmate::cli {

// Owned by the simulate component's work; registers nothing until it lands.
void RegisterSimulateCommand(CLI::App& /*app*/) {}

}  // namespace schedmate::cli
