#include "failure/signature_classifier.h"

#include <algorithm>
#include <map>

namespace schedmate::failure {

SignatureClassifier::SignatureClassifier(const SignatureSet& signatures,
                                         const ExampleStore* examples, ClassifierOptions options)
    : signatures_(signatures), examples_(examples), options_(options) {}

std::string SignatureClassifier::ExampleText(const LocatedLine& root,
                                             std::span<const LocatedLine> followers) {
  std::string text = MaskLogLine(root.line.text);
  // The first origin-or-weak follower often completes a message split over lines.
  for (const auto& f : followers) {
    if (f.role >= LineRole::kWeak) {
      std::string m = MaskLogLine(f.line.text);
      if (!m.empty()) text += (text.empty() ? "" : " ") + m;
      break;
    }
  }
  return text;
}

Result<Classification> SignatureClassifier::Classify(const FailureReport& report) const {
  return ClassifyLines(report.root, report.followers, report.preceding, report.continuation);
}

Classification SignatureClassifier::ClassifyLines(const LocatedLine& root,
                                                  std::span<const LocatedLine> followers,
                                                  std::span<const LocatedLine> preceding,
                                                  std::string_view continuation) const {
  struct Candidate {
    double score = 0;
    int signature = -1;
    const LocatedLine* line = nullptr;
    int agreeing = 0;
  };
  std::map<FailureLabel, Candidate> best;
  struct Matched {
    const LocatedLine* line;
    int signature;
    FailureLabel label;  // the label the line speaks for (a symptom speaks for the root's)
  };
  std::vector<Matched> matched;
  // The root line's label; kUnknown until the root is read, or when it carries none.
  FailureLabel root_label = FailureLabel::kUnknown;

  auto consider = [&](const LocatedLine& line, double factor) {
    LineMatch m = signatures_.MatchLine(line.line.text);
    if (m.labelled < 0) return;
    const Signature& sig = signatures_.signatures()[static_cast<size_t>(m.labelled)];
    // A symptom after (or before) a labelled root cause is that failure's cascade: a rank that
    // raised stops calling collectives, so its peers time out or lose their connections. It
    // corroborates the root's label; only the root's own signature names the category.
    const bool echo = sig.symptom && root_label != FailureLabel::kUnknown;
    const FailureLabel label = echo ? root_label : sig.label;
    matched.push_back(Matched{&line, m.labelled, label});
    Candidate& c = best[label];
    ++c.agreeing;
    double score = sig.weight * factor;
    if (score > c.score) {
      c.score = score;
      if (!echo || c.signature < 0) {
        c.signature = m.labelled;
        c.line = &line;
      }
    }
  };
  LocatedLine joined;
  if (!continuation.empty()) {
    // A message split over two lines: read it whole, credited to the root line.
    joined = root;
    joined.line.text += " " + std::string(continuation);
    consider(joined, 1.0);
  } else {
    consider(root, 1.0);
  }
  if (!matched.empty()) root_label = matched.front().label;
  for (const auto& f : followers) consider(f, options_.follower_factor);
  for (const auto& p : preceding) consider(p, options_.follower_factor);

  Classification out;
  FailureLabel top = FailureLabel::kUnknown;
  double top_score = 0, other_score = 0;
  for (FailureLabel label : {FailureLabel::kInfrastructure, FailureLabel::kApplication}) {
    auto it = best.find(label);
    if (it == best.end()) continue;
    if (it->second.score > top_score) {
      other_score = top_score;
      top_score = it->second.score;
      top = label;
    } else {
      other_score = std::max(other_score, it->second.score);
    }
  }
  if (top != FailureLabel::kUnknown) {
    const Candidate& c = best[top];
    const Signature& sig = signatures_.signatures()[static_cast<size_t>(c.signature)];
    double conf = top_score * (1.0 - 0.5 * other_score / top_score);
    conf += options_.agreement_bonus * std::min(3, c.agreeing - 1);
    out.label = top;
    out.category = sig.category;
    out.confidence = std::min(conf, 0.99);
    out.decided_by = "signature:" + sig.id;
  }

  if (examples_ != nullptr && examples_->size() > 0) {
    auto vote =
        examples_->Vote(ExampleText(root, followers), options_.knn_k, options_.knn_min_similarity);
    if (vote && vote->score > out.confidence) {
      out.label = vote->label;
      out.category = vote->category.empty() ? std::string("learned") : vote->category;
      out.confidence = std::min(vote->score, 0.99);
      out.decided_by = "examples";
    }
  }

  // Evidence: lines whose signature agrees with the answer (root first), then the root itself if
  // the examples decided.
  std::stable_sort(matched.begin(), matched.end(), [](const Matched& a, const Matched& b) {
    return a.line->line.line_no < b.line->line.line_no;
  });
  for (const Matched& mt : matched) {
    if (static_cast<int>(out.evidence.size()) >= options_.max_evidence) break;
    if (mt.label != out.label) continue;
    const Signature& sig = signatures_.signatures()[static_cast<size_t>(mt.signature)];
    const std::string& text = mt.line == &joined ? root.line.text : mt.line->line.text;
    out.evidence.push_back(Evidence{mt.line->line.line_no, text, sig.id});
  }
  if (out.decided_by == "examples") {
    out.evidence.insert(out.evidence.begin(),
                        Evidence{root.line.line_no, root.line.text, "examples"});
    if (static_cast<int>(out.evidence.size()) > options_.max_evidence) {
      out.evidence.resize(static_cast<size_t>(options_.max_evidence));
    }
  }

  if (out.confidence < options_.unknown_below) out.label = FailureLabel::kUnknown;
  return out;
}

}  // namespace schedmate::failure
