#include "tracker/vocabulary.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <utility>

#include "core/builtin_data.h"
#include "core/check.h"

namespace schedmate::tracker {

bool WordList::Contains(std::string_view w) const {
  for (const std::string& x : words_) {
    if (x == w) return true;
  }
  return false;
}

Result<Vocabulary> Vocabulary::Parse(std::string_view yaml, std::string_view source) {
  Vocabulary v;
  const std::pair<const char*, WordList*> lists[] = {
      {"eval", &v.eval},
      {"eval_only_metric", &v.eval_only_metric},
      {"avg", &v.avg},
      {"train", &v.train},
      {"step", &v.step},
      {"epoch", &v.epoch},
      {"head_qualifier", &v.head_qualifier},
      {"share", &v.share},
      {"metric", &v.metric},
      {"loss_name", &v.loss_name},
      {"loss_setting", &v.loss_setting},
      {"loss_neutral", &v.loss_neutral},
      {"time_not_step", &v.time_not_step},
      {"elapsed", &v.elapsed},
      {"step_time_not", &v.step_time_not},
      {"total_prefix", &v.total_prefix},
      {"summary", &v.summary},
      {"checkpoint", &v.checkpoint},
      {"error", &v.error},
      {"warning", &v.warning},
      {"setup", &v.setup},
  };
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}:{}: {}", source, e.mark.line + 1, e.msg));
  }
  const YAML::Node words = root.IsMap() ? root["words"] : YAML::Node();
  if (!words || !words.IsMap()) {
    return Status::InvalidArgument(fmt::format("{}: expected a map with a 'words' map", source));
  }
  for (const auto& entry : words) {
    const std::string name = entry.first.as<std::string>();
    WordList* list = nullptr;
    for (const auto& [n, l] : lists) {
      if (name == n) list = l;
    }
    if (list == nullptr) {
      return Status::InvalidArgument(
          fmt::format("{}:{}: unknown word list '{}'", source, entry.first.Mark().line + 1, name));
    }
    if (!entry.second.IsSequence()) {
      return Status::InvalidArgument(fmt::format("{}:{}: '{}' must be a list of words", source,
                                                 entry.second.Mark().line + 1, name));
    }
    for (const YAML::Node& w : entry.second) {
      std::string word = w.IsScalar() ? w.as<std::string>() : std::string();
      bool lower = !word.empty();
      for (char c : word) lower = lower && !(c >= 'A' && c <= 'Z') && c != ' ';
      if (!lower) {
        return Status::InvalidArgument(
            fmt::format("{}:{}: '{}' holds '{}': words are single lower-case words", source,
                        w.Mark().line + 1, name, word));
      }
      list->words_.push_back(std::move(word));
    }
  }
  for (const auto& [n, l] : lists) {
    if (l->words_.empty()) {
      return Status::InvalidArgument(
          fmt::format("{}: word list '{}' is missing or empty", source, n));
    }
  }
  return v;
}

const Vocabulary& Vocabulary::Builtin() {
  static const Vocabulary& kData =
      ParseBuiltinOrDie<Vocabulary>(BuiltinVocabularyYaml(), "builtin:tracker_vocabulary.yaml");
  return kData;
}

}  // namespace schedmate::tracker
