#include "cli/commands.h"

namespace schedmate::cli {

// Owned by the llm component's work; registers nothing until it lands.
void RegisterLlmCommands(CLI::App& /*app*/) {}

}  // namespace schedmate::cli
