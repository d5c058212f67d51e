#include "cli/flags_util.h"

#include "core/strings.h"
#include "trace/trace_reader.h"

namespace schedmate::cli {

CLI::Validator TraceFormatValidator() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        if (ParseTraceFormat(ToLower(input))) return "";
        return "unknown trace format '" + input + "'; expected auto or one of:\n" +
               trace::DescribeTraceFormats();
      },
      "FORMAT");
}

TraceFormat ParsedTraceFormat(const TraceFlags& flags) {
  // The validator accepted the name; "auto" is the reader's default either way.
  return ParseTraceFormat(ToLower(flags.format)).value_or(TraceFormat::kAuto);
}

void AddTraceFlags(CLI::App* cmd, TraceFlags& flags, TraceArg arg, const std::string& trace_help) {
  if (arg == TraceArg::kOption) cmd->add_option("--trace", flags.path, trace_help)->required();
  if (arg == TraceArg::kPositional) cmd->add_option("trace", flags.path, trace_help)->required();
  cmd->add_option("--format", flags.format,
                  "Trace format: auto (detect from the header row / extension), or one of\n" +
                      trace::DescribeTraceFormats())
      ->capture_default_str()
      ->check(TraceFormatValidator());
  cmd->add_flag("--skip-malformed", flags.skip_malformed,
                "Skip rows that cannot be parsed or hold values out of range (counted, first "
                "reasons shown) instead of stopping at the first one with file:line");
}

CLI::Option* AddLlmConfigFlag(CLI::App* cmd, std::string& path, const std::string& purpose) {
  return cmd->add_option(
      "--llm-config", path,
      "LLM configuration YAML" + (purpose.empty() ? std::string() : " " + purpose) +
          " (default: $SCHEDMATE_LLM_CONFIG, then the SCHEDMATE_LLM_* / SCHEDMATE_EMBED_* "
          "environment; see config/llm.example.yaml)");
}

CLI::Option* AddJsonFlag(CLI::App* cmd, bool& json, const std::string& help) {
  return cmd->add_flag("--json", json, help);
}

CLI::Option* AddPlotFlag(CLI::App* cmd, std::string& path, const std::string& what) {
  return cmd->add_option("--plot", path,
                         "Write " + what + " to this file (.svg, or .png via rsvg-convert)");
}

}  // namespace schedmate::cli
