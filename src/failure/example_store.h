#pragma once
// ExampleStore: a nearest-neighbour model over labelled failure examples, so the handler learns
// from a site's own resolved failures. Rationale: signatures name general failure modes; a site
// also has its own recurring failures (an in-house storage service, a flaky rack) whose messages
// no general rule knows. Each example is the masked text of a root-cause line (plus the first
// failure lines after it): lower-cased words only, no numbers, paths, addresses or ids, so the
// stored examples carry no user data and match the same failure with other values. Vectors are
// text::HashedTfIdf of the masked words (unigrams and adjacent pairs, tf 1 + log, no idf, 2^20
// buckets), L2-normalised; similarity is cosine.
//
// Files: JSON Lines, one example per line:
//   {"label": "infrastructure", "category": "storage", "text": "<masked text>"}
// A path may also be a directory: every *.jsonl file in it is read, in name order.
//
// Thread-safety: const methods are safe for concurrent use; Add() is not.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "core/status.h"
#include "failure/diagnosis.h"
#include "text/hashed_tfidf.h"

namespace schedmate::failure {

// Lower-cased alphabetic words of `line` (length >= 2), dropping whitespace-separated tokens that
// look like paths, URLs, addresses or hex ids. Deterministic.
std::string MaskLogLine(std::string_view line);

struct FailureExample {
  FailureLabel label = FailureLabel::kUnknown;
  std::string category;
  std::string text;  // masked
};

struct NeighbourVote {
  FailureLabel label = FailureLabel::kUnknown;
  std::string category;
  double similarity = 0.0;  // cosine of the best example with this label
  double score = 0.0;       // similarity x share of the similarity-weighted vote
  size_t example_index = 0;
};

class ExampleStore {
 public:
  // Reads a file or a directory of *.jsonl files. A missing path is kNotFound; a bad line is
  // kInvalidArgument naming file:line.
  Status Load(const std::string& path);
  // REQUIRES: example.label != kUnknown.
  void Add(FailureExample example);
  // Appends one example as a JSON line (creating the file and its directory if needed).
  static Status Append(const std::string& path, const FailureExample& example);

  // Similarity-weighted vote of the k most similar examples with similarity >= min_similarity;
  // nullopt if there are none. Ties: higher score, then infrastructure before application.
  std::optional<NeighbourVote> Vote(std::string_view masked_text, int k,
                                    double min_similarity) const;

  size_t size() const { return examples_.size(); }
  const std::vector<FailureExample>& examples() const { return examples_; }

 private:
  static text::HashedTfIdf::Sparse Featurize(std::string_view masked_text);

  std::vector<FailureExample> examples_;
  std::vector<text::HashedTfIdf::Sparse> vectors_;
};

}  // namespace schedmate::failure
