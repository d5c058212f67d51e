#pragma once
// Flag groups shared by several subcommands, declared once so their names, checks and defaults
// agree: trace reading (--trace/--format/--skip-malformed), the LLM configuration (--llm-config)
// and output (--json, --plot). Checks are CLI11 validators, so a bad value is a usage error
// (exit 2) naming the option, raised while parsing; defaults are shown by capture_default_str().
// Files read later (--trace, --llm-config) are not checked for existence here: a missing one is
// the file's fault (exit 1, naming it), as it always was.

#include <CLI/CLI.hpp>
#include <string>

#include "core/job.h"

namespace schedmate::cli {

struct TraceFlags {
  std::string path;
  std::string format = "auto";  // auto: detect from the header row / extension
  bool skip_malformed = false;
};

// A trace format name (case-insensitive): auto or one of the readers' formats.
CLI::Validator TraceFormatValidator();
// The format of `flags` (checked by TraceFormatValidator while parsing).
TraceFormat ParsedTraceFormat(const TraceFlags& flags);

// How the trace is named on the command line.
enum class TraceArg {
  kOption,      // --trace FILE (required)
  kPositional,  // FILE (required)
  kNone,        // only --format and --skip-malformed (the command names its input itself)
};
// Adds the trace flags to `cmd`, bound to `flags` (which must outlive `cmd`). `trace_help`
// describes the file.
void AddTraceFlags(CLI::App* cmd, TraceFlags& flags, TraceArg arg, const std::string& trace_help);

// --llm-config FILE. `purpose` says what the configuration is for ("" for the chat model); the
// help names the fallbacks ($SCHEDMATE_LLM_CONFIG, then the environment).
CLI::Option* AddLlmConfigFlag(CLI::App* cmd, std::string& path, const std::string& purpose = "");

// --json with `help` describing the document.
CLI::Option* AddJsonFlag(CLI::App* cmd, bool& json, const std::string& help);
// --plot FILE (.svg, or .png through rsvg-convert) with `what` the charts drawn.
CLI::Option* AddPlotFlag(CLI::App* cmd, std::string& path, const std::string& what);

}  // namespace schedmate::cli
