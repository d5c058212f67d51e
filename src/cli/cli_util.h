#pragma once
// Shared helpers for subcommands: error reporting with exit codes, JSON printing.
//
// Exit codes: 0 success; 1 the work failed (bad input file, unreachable service...); 2 usage.

#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

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

// One JSON document on stdout, indented, newline-terminated.
inline void PrintJson(const nlohmann::json& j) { std::cout << DumpJson(j, 2) << "\n"; }

}  // namespace schedmate::cli
