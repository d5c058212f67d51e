#include "cli/commands.h"

namespace schedmate::cli {

// Owned by the diagnose component's work; registers nothing until it lands.
void RegisterDiagnoseCommand(CLI::App& /*app*/) {}

}  // namespace schedmate::cli
