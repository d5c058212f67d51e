#pragma once
// Shared helpers for subcommands: registration, error reporting with exit codes, JSON printing.
//
// Exit codes: 0 success; 1 the work failed (bad input file, unreachable service...); 2 usage.

#include <CLI/CLI.hpp>
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>

#include "core/json_dump.h"
#include "core/status.h"

namespace schedmate::cli {

inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// Prints "schedmate: error: <message>" on stderr and ends the command with exit code 1
// (2 for kInvalidArgument raised by flag validation, see FailUsage).
[[noreturn]] inline void Fail(const Status& status) {
  std::cerr << "schedmate: error: " << status.message() << "\n";
  throw CLI::RuntimeError(kExitFailure);
}
[[noreturn]] inline void FailUsage(const std::string& message) {
  std::cerr << "schedmate: error: " << message << "\n";
  throw CLI::RuntimeError(kExitUsage);
}

// Registers subcommand `name` of `parent`: its flags are one Flags value, shared by the options
// CLI11 binds to its members and by the callback, which calls `run(flags)` after a successful
// parse. Returns the subcommand and its flags, for declaring the options.
template <typename Flags>
std::pair<CLI::App*, Flags*> AddCommand(CLI::App& parent, std::string name, std::string help,
                                        void (*run)(const Flags&)) {
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = parent.add_subcommand(std::move(name), std::move(help));
  cmd->callback([flags, run] { run(*flags); });
  return {cmd, flags.get()};
}
// Registers a group of subcommands (`schedmate trace stats`): exactly one of them is required.
inline CLI::App* AddCommandGroup(CLI::App& parent, std::string name, std::string help) {
  CLI::App* group = parent.add_subcommand(std::move(name), std::move(help));
  group->require_subcommand(1);
  return group;
}

// One JSON document on stdout, indented, newline-terminated.
inline void PrintJson(const nlohmann::json& j) { std::cout << DumpJson(j, 2) << "\n"; }

// Numeric validators for real-valued options. CLI::Range and CLI::PositiveNumber let NaN through
// (every comparison with it is false) and accept "inf"; these want a finite number. Failing one is
// a usage error (exit 2) whose message names the option.
//   FiniteRange(lo, hi): lo <= x <= hi.   PositiveFinite(hi): 0 < x <= hi.
inline CLI::Validator FiniteRange(double lo, double hi, bool exclude_lo = false) {
  std::ostringstream desc;
  desc << "FINITE in " << (exclude_lo ? "(" : "[") << lo << " - " << hi << "]";
  return CLI::Validator(
      [lo, hi, exclude_lo](std::string& input) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(input, v)) return "Value " + input + " is not a number";
        if (!std::isfinite(v)) return "Value " + input + " is not a finite number";
        if (v < lo || v > hi || (exclude_lo && v == lo)) {
          std::ostringstream msg;
          msg << "Value " << input << " not in range " << (exclude_lo ? "(" : "[") << lo << ", "
              << hi << "]";
          return msg.str();
        }
        return std::string();
      },
      desc.str());
}
inline CLI::Validator PositiveFinite(double hi) { return FiniteRange(0, hi, /*exclude_lo=*/true); }

}  // namespace schedmate::cli
