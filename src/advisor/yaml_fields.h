#pragma once
// Reading the advisor's knowledge files (config/extractor_knowledge.yaml,
// config/duration_priors.yaml): a parser derives from YamlFields, throws YamlParseError through
// Fail() with "source:line: what" and catches it at its entry point, so every error names the
// file and line (CurrentYamlError turns either kind of error into a Status).

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <set>
#include <span>
#include <string>
#include <string_view>

#include "core/status.h"

namespace schedmate::advisor::internal {

struct YamlParseError {
  std::string message;
};

class YamlFields {
 public:
  explicit YamlFields(std::string_view source) : source_(source) {}

  [[noreturn]] void Fail(const YAML::Node& at, std::string_view what) const {
    throw YamlParseError{fmt::format("{}:{}: {}", source_, at.Mark().line + 1, what)};
  }
  // The document's top-level sections in file order: `section(name, key, value)` for each. A
  // document that is not a map, a section given twice or a `required` one missing fails here
  // (what `section` does with a name it does not know is its own affair).
  template <typename F>
  void ForEachSection(std::string_view yaml, std::span<const char* const> required,
                      F&& section) const {
    YAML::Node root = YAML::Load(std::string(yaml));
    if (!root.IsMap()) Fail(root, "expected a map of sections");
    std::set<std::string, std::less<>> seen;
    for (const auto& kv : root) {
      const std::string name = kv.first.IsScalar() ? kv.first.Scalar() : "";
      if (!seen.insert(name).second) Fail(kv.first, fmt::format("section '{}' twice", name));
      section(name, kv.first, kv.second);
    }
    for (const char* s : required) {
      if (!seen.count(s)) {
        throw YamlParseError{fmt::format("{}: section '{}' is missing", source_, s)};
      }
    }
  }
  std::string Text(const YAML::Node& n, std::string_view what) const {
    if (!n.IsScalar() || n.Scalar().empty()) {
      Fail(n, fmt::format("{} must be a non-empty string", what));
    }
    return n.Scalar();
  }

 protected:
  std::string_view source_;
};

// Called inside `catch (...)` around a parse: the YamlParseError or YAML::Exception being handled
// as kInvalidArgument naming source:line; any other exception goes on up.
inline Status CurrentYamlError(std::string_view source) {
  try {
    throw;
  } catch (const YamlParseError& e) {
    return Status::InvalidArgument(e.message);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}:{}: {}", source, e.mark.line + 1, e.msg));
  }
}

}  // namespace schedmate::advisor::internal
