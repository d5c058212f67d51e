#pragma once
// Vocabulary: the words training logs use for what they print (config/tracker_vocabulary.yaml,
// compiled in). The line parser gives a value its role by these word lists; which list wins and
// how ranks combine is code (line_parser.cc), the words are data.
//
// Thread-safety: immutable after construction; Builtin() is shared.

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace schedmate::tracker {

// A set of lower-case words (small: a linear scan is as fast as a hash here).
class WordList {
 public:
  bool Contains(std::string_view w) const;
  const std::vector<std::string>& words() const { return words_; }

 private:
  friend class Vocabulary;
  std::vector<std::string> words_;
};

class Vocabulary {
 public:
  WordList eval, eval_only_metric, avg, train, step, epoch, head_qualifier, share, metric,
      loss_name, loss_setting, loss_neutral, time_not_step, elapsed, step_time_not, total_prefix,
      summary, checkpoint, error, warning, setup;

  // Parses a vocabulary file; every list is required and an unknown list is an error (a typo
  // would otherwise silently empty a list). `source` names the file in errors.
  static Result<Vocabulary> Parse(std::string_view yaml, std::string_view source);
  // The compiled-in config/tracker_vocabulary.yaml (parsed once; a broken file is a build
  // defect: it aborts with its error, which the unit tests catch).
  static const Vocabulary& Builtin();
};

std::string_view BuiltinVocabularyYaml();

}  // namespace schedmate::tracker
