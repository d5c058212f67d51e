#include "cli/commands.h"

namespace schedmate::cli {

// Owned by the advise component's work; registers nothing until it lands.
void RegisterAdviseCommands(CLI::App& /*app*/) {}

}  // namespace schedmate::cli
