#pragma once
// Reading the advisor's knowledge files (config/extractor_knowledge.yaml,
// config/duration_priors.yaml): a parser derives from YamlFields, throws YamlParseError through
// Fail() with "source:line: what" and catches it at its entry point, so every error names the
// file and line.

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

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
  std::string Text(const YAML::Node& n, std::string_view what) const {
    if (!n.IsScalar() || n.Scalar().empty()) {
      Fail(n, fmt::format("{} must be a non-empty string", what));
    }
    return n.Scalar();
  }

 protected:
  std::string_view source_;
};

}  // namespace schedmate::advisor::internal
