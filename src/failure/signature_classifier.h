#pragma once
// SignatureClassifier: the built-in FailureClassifier. Infrastructure vs application, with a
// finer category, a confidence and the evidence lines, from the root-cause line and the failure
// lines around it.
//
// Rationale. The root-cause line says most: its highest-priority labelled signature speaks with
// its weight. Failure lines after it (the cascade) speak at `follower_factor` of their weight: a
// cascade can name the cause the root line hides (a Ray worker "died unexpectedly", then "its
// node has died"); so can the report's lines before the root (Slurm's "CANCELLED ... DUE TO
// PREEMPTION" printed before the workers' SIGKILL). Symptom signatures (collective timeouts, a
// peer's lost connection) are the exception: they say that some rank stopped, not why, so when
// the root line carries a label they speak for it (corroborating, never naming the category) --
// an application error followed by the other ranks' watchdog timeouts is an application
// failure. The label with the strongest single piece of
// evidence wins; the other label's strongest evidence lowers the confidence (conf = best * (1 - 0.5
// * other / best)), agreeing lines raise it a little. The site's examples (ExampleStore) vote by
// similarity and win when their score beats the signatures', so a site's resolved failures override
// general rules. Below `unknown_below` the answer is kUnknown: an unsure guess is never shown as
// certain. Ties: infrastructure before application (enum order); equal scores keep the earlier
// line.
//
// Thread-safety: Classify() is const and safe for concurrent use.

#include <span>
#include <string>
#include <vector>

#include "failure/diagnosis.h"
#include "failure/example_store.h"
#include "failure/failure_classifier.h"
#include "failure/first_error_locator.h"
#include "failure/signature_set.h"

namespace schedmate::failure {

struct ClassifierOptions {
  double unknown_below = 0.45;
  double follower_factor = 0.7;
  double agreement_bonus = 0.03;  // per extra agreeing line, at most 3
  int knn_k = 3;
  double knn_min_similarity = 0.5;
  int max_evidence = 6;
};

class SignatureClassifier : public FailureClassifier {
 public:
  // `signatures` must be compiled; `examples` may be null. Both must outlive the classifier.
  SignatureClassifier(const SignatureSet& signatures, const ExampleStore* examples,
                      ClassifierOptions options = {});

  std::string_view Name() const override { return "builtin"; }
  // Never fails.
  Result<Classification> Classify(const FailureReport& report) const override;

  // `followers`: failure lines after the root; `preceding`: wrapper/weak lines of the same
  // report before it (a scheduler's cancel notice, a launcher's header). Both speak at
  // follower_factor.
  // `continuation`: the next line when the root's message continues there (read together with
  // the root, at full weight).
  Classification ClassifyLines(const LocatedLine& root, std::span<const LocatedLine> followers,
                               std::span<const LocatedLine> preceding = {},
                               std::string_view continuation = {}) const;

  // The masked text the nearest-neighbour model sees for this failure (also what --learn stores).
  static std::string ExampleText(const LocatedLine& root, std::span<const LocatedLine> followers);

 private:
  const SignatureSet& signatures_;
  const ExampleStore* examples_;
  ClassifierOptions options_;
};

}  // namespace schedmate::failure
