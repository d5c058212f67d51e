#include "advisor/llm_metadata_agent.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include "core/json_dump.h"
#include "core/strings.h"
#include "fmt/format.h"

namespace schedmate::advisor {
namespace prompts {
std::string_view AdvisorMetadataSystem();  // config/prompts/advisor_metadata.txt
}  // namespace prompts

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Fields whose values are numbers (strings only when the job computes them at run time).
// clang-format off
const std::set<std::string, std::less<>> kNumericFields = {
    "params", "per_device_batch_size", "global_batch_size", "gradient_accumulation",
    "sequence_length", "image_size", "epochs", "max_steps",
    "learning_rate", "num_gpus", "num_nodes"};
// clang-format on

bool HasProvenance(const std::string& source) {
  // "file:line" or "derived: ..."; "default: ..." is a library default, not evidence.
  return !source.empty() && !StartsWith(source, "default:") && source != "llm";
}

std::string Show(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

Result<MergePreference> ParseMergePreference(std::string_view text) {
  const std::string t = ToLower(Trim(text));
  if (t == "builtin") return MergePreference::kBuiltin;
  if (t == "llm") return MergePreference::kLlm;
  return Status::InvalidArgument(fmt::format("--prefer: expected builtin or llm, got '{}'", text));
}

const json& MetadataAnswerSchema() {
  static const json schema = [] {
    json props = json::object();
    json required = json::array();
    for (std::string_view f : kMetadataFields) {
      const std::string name(f);
      props[name] = kNumericFields.count(name) != 0
                        ? json{{"type", json::array({"number", "string", "null"})}}
                        : json{{"type", json::array({"string", "null"})}};
      required.push_back(name);
    }
    return json{{"type", "object"},
                {"properties", props},
                {"required", required},
                {"additionalProperties", false}};
  }();
  return schema;
}

JobMetadata MetadataFromAnswer(const json& answer) {
  JobMetadata m;
  for (std::string_view f : kMetadataFields) {
    const std::string name(f);
    auto it = answer.find(name);
    if (it == answer.end() || it->is_null()) continue;
    json v = *it;
    if (v.is_string()) {
      std::string s(Trim(v.get<std::string>()));
      if (s.empty() || ToLower(s) == "null" || ToLower(s) == "unknown") continue;
      if (kNumericFields.count(name) != 0) {
        if (auto i = ParseInt(s)) {
          v = *i;
        } else if (auto d = ParseDouble(s); d && std::isfinite(*d)) {
          v = *d;
        } else {
          v = s;
        }
      } else {
        v = s;
      }
    } else if (v.is_number_float()) {
      // Integral floats (4.0) print as integers, like the built-in engine's values.
      const double d = v.get<double>();
      if (!std::isfinite(d)) continue;
      if (d == static_cast<double>(static_cast<int64_t>(d)) && std::abs(d) < 9e15 &&
          name != "learning_rate") {
        v = static_cast<int64_t>(d);
      }
    }
    m.values[name] = std::move(v);
    m.sources[name] = "llm";
  }
  return m;
}

JobMetadata MergeMetadata(const JobMetadata& builtin, const JobMetadata& from_llm,
                          MergePreference prefer) {
  JobMetadata out = builtin;
  for (const auto& [field, value] : from_llm.values) {
    auto it = builtin.values.find(field);
    if (it == builtin.values.end()) {
      out.values[field] = value;
      out.sources[field] = "llm";
      continue;
    }
    if (it->second == value) continue;  // agreement: keep the built-in provenance
    auto src = builtin.sources.find(field);
    const std::string bsrc = src == builtin.sources.end() ? "" : src->second;
    const bool llm_wins = prefer == MergePreference::kLlm || !HasProvenance(bsrc);
    out.notes.push_back(fmt::format("llm disagrees on {}: builtin {} ({}), llm {}; kept {}", field,
                                    Show(it->second), bsrc.empty() ? "no source" : bsrc,
                                    Show(value), llm_wins ? "llm" : "builtin"));
    if (llm_wins) {
      out.values[field] = value;
      out.sources[field] = "llm";
    }
  }
  return out;
}

Result<std::string> ConfinedPath(const std::string& root, const std::string& relative) {
  std::error_code ec;
  const fs::path base = fs::canonical(root, ec);
  if (ec) return Status::NotFound("job directory not found: " + root);
  fs::path rel(relative.empty() ? "." : relative);
  if (rel.is_absolute()) {
    return Status::InvalidArgument(
        fmt::format("path '{}' is absolute; give a path relative to the job directory", relative));
  }
  const fs::path full = fs::weakly_canonical(base / rel, ec);
  if (ec) return Status::NotFound("cannot resolve path '" + relative + "'");
  const std::string b = base.string();
  const std::string f = full.string();
  if (!(f == b || (StartsWith(f, b) && (b.back() == '/' || f[b.size()] == '/')))) {
    return Status::InvalidArgument(
        fmt::format("path '{}' is outside the job directory; access refused", relative));
  }
  if (!fs::exists(full, ec)) return Status::NotFound("no such file or directory: " + relative);
  return f;
}

LlmMetadataAgent::LlmMetadataAgent(llm::ChatClient& chat, LlmAgentOptions options)
    : chat_(chat), options_(std::move(options)) {}

Result<std::string> LlmMetadataAgent::FileTree(const std::string& root, const json& args) {
  const std::string rel = args.value("path", std::string("."));
  Result<std::string> dir = ConfinedPath(root, rel);
  if (!dir.ok()) {
    if (dir.status().code() == StatusCode::kInvalidArgument) ++stats_.refused_paths;
    return dir.status();
  }
  std::error_code ec;
  if (!fs::is_directory(*dir, ec)) return Status::InvalidArgument("'" + rel + "' is a file");
  const int depth_limit =
      std::clamp(args.value("max_depth", options_.max_tree_depth), 1, options_.max_tree_depth);
  const fs::path base = fs::canonical(root, ec);
  std::vector<std::string> lines;
  size_t total = 0;
  // Breadth-limited, sorted walk; hidden entries and symlinks leaving the root are skipped.
  std::function<void(const fs::path&, int)> walk = [&](const fs::path& d, int depth) {
    std::vector<fs::directory_entry> entries;
    for (fs::directory_iterator it(d, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec)) {
      entries.push_back(*it);
    }
    std::sort(entries.begin(), entries.end(),
              [](const auto& a, const auto& b) { return a.path() < b.path(); });
    for (const auto& e : entries) {
      const std::string name = e.path().filename().string();
      if (name.empty() || name[0] == '.' || name == "__pycache__") continue;
      ++total;
      if (lines.size() >= options_.max_tree_entries) continue;
      std::error_code ec2;
      const fs::path canon = fs::weakly_canonical(e.path(), ec2);
      const std::string r = fs::relative(e.path(), base, ec2).string();
      const bool inside = !ec2 && StartsWith(canon.string(), base.string());
      if (!inside) continue;
      if (e.is_directory(ec2)) {
        lines.push_back(r + "/");
        if (depth < depth_limit) walk(e.path(), depth + 1);
      } else {
        lines.push_back(fmt::format("{}  ({} bytes)", r, e.file_size(ec2)));
      }
    }
  };
  walk(*dir, 1);
  std::string out = lines.empty() ? "(empty directory)\n" : "";
  for (const auto& l : lines) out += l + "\n";
  if (total > lines.size()) {
    out += fmt::format("[{} more entries not shown]\n", total - lines.size());
  }
  return out;
}

Result<std::string> LlmMetadataAgent::FileRead(const std::string& root, const json& args) {
  const std::string rel = args.value("path", std::string());
  Result<std::string> file = ConfinedPath(root, rel);
  if (!file.ok()) {
    if (file.status().code() == StatusCode::kInvalidArgument) ++stats_.refused_paths;
    return file.status();
  }
  std::error_code ec;
  if (fs::is_directory(*file, ec)) {
    return Status::InvalidArgument("'" + rel + "' is a directory; use file_tree");
  }
  std::ifstream in(*file, std::ios::binary);
  if (!in) return Status::NotFound("cannot open " + rel);
  std::string data(options_.max_read_bytes, '\0');
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  data.resize(static_cast<size_t>(in.gcount()));
  if (data.find('\0') != std::string::npos) return Status::InvalidArgument(rel + " is binary");
  const int64_t first = std::max<int64_t>(1, args.value("start_line", int64_t{1}));
  std::string out;
  int64_t line_no = 0;
  size_t shown = 0;
  bool more = false;
  for (std::string_view line : Split(data, '\n')) {
    ++line_no;
    if (line_no < first) continue;
    if (shown >= options_.max_read_lines) {
      more = true;
      break;
    }
    out += fmt::format("{:>5}: {}\n", line_no, line);
    ++shown;
  }
  if (more) {
    out += fmt::format("[more lines follow; call file_read with start_line {}]\n", line_no);
  }
  if (std::find(stats_.files_read.begin(), stats_.files_read.end(), rel) ==
      stats_.files_read.end()) {
    stats_.files_read.push_back(rel);
  }
  return out.empty() ? std::string("(no lines)\n") : out;
}

std::vector<llm::AgentTool> LlmMetadataAgent::Tools(const std::string& root) {
  std::vector<llm::AgentTool> tools;
  tools.push_back(
      {llm::ToolSpec{"file_tree",
                     "List the files of the job directory (or a subdirectory), relative paths.",
                     {{"type", "object"},
                      {"properties",
                       {{"path", {{"type", "string"}, {"description", "subdirectory, default ."}}},
                        {"max_depth", {{"type", "integer"}, {"minimum", 1}}}}},
                      {"additionalProperties", false}}},
       [this, root](const json& a) { return FileTree(root, a); }});
  tools.push_back({llm::ToolSpec{"file_read",
                                 "Read a text file of the job directory, with line numbers.",
                                 {{"type", "object"},
                                  {"properties",
                                   {{"path", {{"type", "string"}}},
                                    {"start_line", {{"type", "integer"}, {"minimum", 1}}}}},
                                  {"required", {"path"}},
                                  {"additionalProperties", false}}},
                   [this, root](const json& a) { return FileRead(root, a); }});
  return tools;
}

Result<JobMetadata> LlmMetadataAgent::Extract(const JobSource& source, const JobMetadata& builtin) {
  stats_ = {};
  std::error_code ec;
  std::string root = source.root;
  if (root.empty() && !source.path.empty()) {
    root = fs::is_directory(source.path, ec) ? source.path
                                             : fs::path(source.path).parent_path().string();
    if (root.empty()) root = ".";
  }
  if (root.empty() || !fs::is_directory(root, ec)) {
    return Status::NotFound("llm agent: no job directory to look at");
  }
  json known = json::object();
  for (const auto& [k, v] : builtin.values) known[k] = v;
  std::string user = fmt::format(
      "The job's entry file is '{}'. A rule-based parser already found these values (it may be "
      "incomplete or wrong): {}\nLook at the files and answer with the JSON object.",
      builtin.entry.empty() ? std::string("(unknown)") : builtin.entry, DumpJson(known));
  if (!source.script_text.empty() && source.path.empty()) {
    user += "\nThe batch script '" + source.script_name + "' is:\n" +
            source.script_text.substr(0, options_.limits.max_tool_bytes);
  }
  const std::vector<llm::AgentTool> tools = Tools(root);
  llm::AgentOptions ao;
  ao.protocol = options_.protocol;
  ao.final_schema = MetadataAnswerSchema();
  ao.seed = 1;
  Result<llm::AgentResult> run = llm::RunAgent(chat_, std::string(prompts::AdvisorMetadataSystem()),
                                               user, tools, options_.limits, ao);
  if (!run.ok()) return run.status();
  stats_.steps = run->steps;
  stats_.tool_calls = static_cast<int>(run->tool_calls.size());
  stats_.tokens = run->usage.total_tokens;
  JobMetadata merged =
      MergeMetadata(builtin, MetadataFromAnswer(*run->final_json), options_.prefer);
  for (const std::string& f : stats_.files_read) {
    if (std::find(merged.files_read.begin(), merged.files_read.end(), f) ==
        merged.files_read.end()) {
      merged.files_read.push_back(f);
    }
  }
  if (stats_.refused_paths > 0) {
    merged.notes.push_back(fmt::format("llm agent: {} path(s) outside the job directory refused",
                                       stats_.refused_paths));
  }
  return merged;
}

}  // namespace schedmate::advisor
