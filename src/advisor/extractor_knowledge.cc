#include "advisor/extractor_knowledge.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <set>

#include "advisor/extraction.h"
#include "advisor/yaml_fields.h"
#include "core/builtin_data.h"
#include "core/check.h"
#include "core/strings.h"

namespace schedmate::advisor::internal {
namespace {

using nlohmann::json;

class KnowledgeParser : public internal::YamlFields {
 public:
  using YamlFields::YamlFields;
  int Int(const YAML::Node& n, std::string_view what) const {
    std::optional<int64_t> v = n.IsScalar() ? ParseInt(n.Scalar()) : std::nullopt;
    if (!v || *v < 0 || *v > 1'000'000'000) Fail(n, fmt::format("{} must be a whole number", what));
    return static_cast<int>(*v);
  }
  double Number(const YAML::Node& n, std::string_view what) const {
    std::optional<double> v = n.IsScalar() ? ParseDouble(n.Scalar()) : std::nullopt;
    if (!v || !std::isfinite(*v)) Fail(n, fmt::format("{} must be a number", what));
    return *v;
  }
  // A two-element list [a, b].
  std::pair<YAML::Node, YAML::Node> Pair(const YAML::Node& n, std::string_view section) const {
    if (!n.IsSequence() || n.size() != 2)
      Fail(n, fmt::format("'{}' entries are two-element lists [name, value]", section));
    return {n[0], n[1]};
  }
  // name: [framework or field, number], no name twice.
  std::map<std::string, std::pair<std::string, int>> NamedPairs(const YAML::Node& n,
                                                                std::string_view section) const {
    if (!n.IsMap()) Fail(n, fmt::format("'{}' must be a map", section));
    std::map<std::string, std::pair<std::string, int>> out;
    for (const auto& kv : n) {
      std::string name = Text(kv.first, fmt::format("a key of '{}'", section));
      auto [a, b] = Pair(kv.second, section);
      if (!out.emplace(name, std::pair{Text(a, "the name"), Int(b, "the number")}).second)
        Fail(kv.first, fmt::format("'{}' appears twice in '{}'", name, section));
    }
    return out;
  }
  std::vector<std::string> Names(const YAML::Node& n, std::string_view section) const {
    std::vector<std::string> out;
    for (const YAML::Node& e : Sequence(n, section)) out.push_back(Text(e, "a name"));
    return out;
  }
  RlPolicy Policy(const YAML::Node& n) const {
    static const std::set<std::string> kFields = {"pattern", "policy", "why"};
    Fields(n, kFields, "rl_policies", {"pattern", "policy", "why"});
    if (!n["pattern"].IsScalar()) Fail(n["pattern"], "pattern must be a string");
    return {n["pattern"].Scalar(), Text(n["policy"], "policy"), Text(n["why"], "why")};
  }
  // By value: a YAML::Node is a handle, and a caller may pass a temporary (n["key"]) into a
  // range-for, whose lifetime would end before the loop body.
  YAML::Node Sequence(const YAML::Node& n, std::string_view section) const {
    if (!n.IsSequence()) Fail(n, fmt::format("'{}' must be a list", section));
    return n;
  }
  KnownSchedule Schedule(const YAML::Node& n) const {
    static const std::set<std::string> kFields = {"stem", "optimizer", "lr", "epochs"};
    Fields(n, kFields, "mmdet_schedules", {"stem", "optimizer", "lr", "epochs"});
    return {Text(n["stem"], "stem"), Text(n["optimizer"], "optimizer"), Number(n["lr"], "lr"),
            Int(n["epochs"], "epochs")};
  }
  LibraryDefault Default(const YAML::Node& n) const {
    static const std::set<std::string> kFields = {
        "framework", "framework_prefix", "requires", "field", "value", "why"};
    Fields(n, kFields, "library_defaults", {"field", "value", "why"});
    LibraryDefault d;
    if (n["framework"]) d.framework = Text(n["framework"], "framework");
    if (n["framework_prefix"]) {
      for (const YAML::Node& p : Sequence(n["framework_prefix"], "framework_prefix"))
        d.framework_prefix.push_back(Text(p, "a framework prefix"));
    }
    if (d.framework.empty() == d.framework_prefix.empty())
      Fail(n, "a library default names either 'framework' or 'framework_prefix'");
    if (n["requires"]) {
      d.condition = Text(n["requires"], "requires");
      if (d.condition != "hf_trainer" && d.condition != "torchtune_packaged_config")
        Fail(n["requires"],
             fmt::format("unknown fact '{}' (hf_trainer, torchtune_packaged_config)", d.condition));
    }
    d.field = Text(n["field"], "field");
    const YAML::Node v = n["value"];
    if (!v.IsScalar()) Fail(v, "value must be a scalar");
    d.value = v.Tag() == "!" ? json(v.Scalar()) : TypedValue(v.Scalar());  // quoted: a string
    d.why = Text(n["why"], "why");
    return d;
  }

 private:
  // A map entry with only `allowed` fields and every `required` one.
  void Fields(const YAML::Node& n, const std::set<std::string>& allowed, std::string_view section,
              std::initializer_list<const char*> required) const {
    if (!n.IsMap()) Fail(n, fmt::format("'{}' entries are maps", section));
    for (const auto& kv : n) {
      std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "";
      if (!allowed.count(k)) Fail(kv.first, fmt::format("unknown field '{}' in '{}'", k, section));
    }
    for (const char* r : required) {
      if (!n[r]) Fail(n, fmt::format("'{}' entry without '{}'", section, r));
    }
  }
};

// The sections of one plain shape each, by the member they fill.
using K = ExtractorKnowledge;
using Votes = std::map<std::string, std::pair<std::string, int>>;
using TextPairs = std::vector<std::pair<std::string, std::string>>;
template <typename Member>
using SectionTable = std::initializer_list<std::pair<std::string_view, Member K::*>>;
// name -> (framework, votes).
const SectionTable<Votes> kVoteSections = {{"keys", &K::keys},
                                           {"import_votes", &K::import_votes},
                                           {"argument_votes", &K::argument_votes},
                                           {"config_key_votes", &K::config_key_votes}};
// Lists of names, in file order.
const SectionTable<std::vector<std::string>> kNameLists = {
    {"world_size_names", &K::world_size_names},
    {"device_per_node_calls", &K::device_per_node_calls},
    {"hf_example_programs", &K::hf_example_programs},
    {"frameworks", &K::frameworks},
    {"option_calls", &K::option_calls},
    {"entry_function_calls", &K::entry_function_calls},
    {"command_decorators", &K::command_decorators}};
// Sets of names.
const SectionTable<std::set<std::string>> kNameSets = {
    {"config_options", &K::config_options},
    {"train_calls", &K::train_calls},
    {"hf_trainer_calls", &K::hf_trainer_calls},
    {"argument_objects", &K::argument_objects},
    {"generic_dataset_classes", &K::generic_dataset_classes}};
// Ordered [pattern, value] pairs.
const SectionTable<TextPairs> kPatternLists = {{"family_patterns", &K::family_patterns},
                                               {"known_params", &K::known_params},
                                               {"layer_families", &K::layer_families}};

// The member `table` gives section `name`, or null.
template <typename Member>
Member K::*Find(const SectionTable<Member>& table, std::string_view name) {
  for (const auto& [section, member] : table) {
    if (section == name) return member;
  }
  return nullptr;
}

// Fills `k` from a section of one of the plain shapes above; false for any other section.
bool ReadPlainSection(const KnowledgeParser& p, const std::string& name, const YAML::Node& n,
                      ExtractorKnowledge& k) {
  if (auto votes = Find(kVoteSections, name)) {
    k.*votes = p.NamedPairs(n, name);
  } else if (auto list = Find(kNameLists, name)) {
    k.*list = p.Names(n, name);
  } else if (auto set = Find(kNameSets, name)) {
    std::vector<std::string> names = p.Names(n, name);
    (k.*set).insert(names.begin(), names.end());
  } else if (auto pairs = Find(kPatternLists, name)) {
    for (const YAML::Node& e : p.Sequence(n, name)) {
      auto [a, b] = p.Pair(e, name);
      (k.*pairs).emplace_back(p.Text(a, "a pattern"), p.Text(b, "a value"));
    }
  } else {
    return false;
  }
  return true;
}

}  // namespace

Result<ExtractorKnowledge> ExtractorKnowledge::Parse(std::string_view yaml,
                                                     std::string_view source) {
  static const char* kSections[] = {"version",
                                    "keys",
                                    "mmdet_schedules",
                                    "dataset_image_sizes",
                                    "family_patterns",
                                    "known_params",
                                    "import_votes",
                                    "argument_votes",
                                    "library_defaults",
                                    "config_key_votes",
                                    "framework_keys",
                                    "rl_policies",
                                    "world_size_names",
                                    "device_per_node_calls",
                                    "layer_families",
                                    "image_size_multiples",
                                    "short_options",
                                    "config_options",
                                    "train_calls",
                                    "hf_trainer_calls",
                                    "argument_objects",
                                    "hf_example_programs",
                                    "generic_dataset_classes",
                                    "dataset_abbreviations",
                                    "frameworks",
                                    "option_calls",
                                    "entry_function_calls",
                                    "command_decorators"};
  KnowledgeParser p(source);
  ExtractorKnowledge k;
  try {
    p.ForEachSection(
        yaml, kSections, [&](const std::string& name, const YAML::Node& key, const YAML::Node& n) {
          if (std::find(std::begin(kSections), std::end(kSections), name) == std::end(kSections))
            p.Fail(key, fmt::format("unknown section '{}'", name));
          if (ReadPlainSection(p, name, n, k)) return;
          if (name == "version") {
            if (p.Int(n, "version") != 1) p.Fail(n, "unsupported version (expected 1)");
          } else if (name == "framework_keys") {
            if (!n.IsMap()) p.Fail(n, "'framework_keys' must be a map of frameworks");
            for (const auto& fw : n)
              k.framework_keys[p.Text(fw.first, "a framework")] = p.NamedPairs(fw.second, name);
          } else if (name == "rl_policies") {
            for (const YAML::Node& e : p.Sequence(n, name)) k.rl_policies.push_back(p.Policy(e));
          } else if (name == "image_size_multiples") {
            if (!n.IsMap()) p.Fail(n, "'image_size_multiples' must be a map");
            for (const auto& e : n)
              k.image_size_multiples[p.Text(e.first, "a framework")] = p.Int(e.second, "a stride");
          } else if (name == "dataset_abbreviations") {
            if (!n.IsMap()) p.Fail(n, "'dataset_abbreviations' must be a map");
            for (const auto& e : n)
              k.dataset_abbreviations[p.Text(e.first, "an abbreviation")] =
                  p.Text(e.second, "a name");
          } else if (name == "short_options") {
            if (!n.IsMap()) p.Fail(n, "'short_options' must be a map");
            for (const auto& e : n)
              k.short_options[p.Text(e.first, "an option letter")] = p.Text(e.second, "a key");
          } else if (name == "mmdet_schedules") {
            for (const YAML::Node& e : p.Sequence(n, name))
              k.mmdet_schedules.push_back(p.Schedule(e));
          } else if (name == "library_defaults") {
            for (const YAML::Node& e : p.Sequence(n, name))
              k.library_defaults.push_back(p.Default(e));
          } else if (name == "dataset_image_sizes") {
            for (const YAML::Node& e : p.Sequence(n, name)) {
              auto [a, b] = p.Pair(e, name);
              k.dataset_image_sizes.emplace_back(p.Text(a, "a dataset"), p.Int(b, "a size"));
            }
          }
        });
  } catch (...) {
    return internal::CurrentYamlError(source);
  }
  return k;
}

const ExtractorKnowledge& ExtractorKnowledge::Builtin() {
  static const ExtractorKnowledge& kData = ParseBuiltinOrDie<ExtractorKnowledge>(
      BuiltinExtractorKnowledgeYaml(), "builtin:extractor_knowledge.yaml");
  return kData;
}

}  // namespace schedmate::advisor::internal
