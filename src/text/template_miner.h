#pragma once
// TemplateMiner: Drain-style online log template mining. Variable tokens (numbers, hex ids,
// paths, timestamps) are masked; lines with the same token count and first token are compared
// position by position, and a line joins the most similar cluster when at least `similarity` of
// its tokens match (differing positions become the wildcard "<*>"). Otherwise it starts a cluster.
//
// Rationale: log readers (the tracker's line classifier and embeddings filter) need a stable notion
// of "the same kind of line" that survives varying values and small wording changes (e.g. a dataset
// name), to remember which formats carried training progress and to tell a format change.
// Deterministic: same input order, same ids. Not thread-safe.

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace schedmate::text {

class TemplateMiner {
 public:
  struct Options {
    double similarity = 0.6;
    size_t max_tokens = 48;  // tokens beyond this are ignored
    size_t max_clusters_per_bucket = 64;
    size_t max_clusters = 20000;  // beyond this, lines get id -1
  };
  TemplateMiner() : TemplateMiner(Options{}) {}
  explicit TemplateMiner(Options options) : options_(options) {}

  // Masked tokens of a line: whitespace-split; a token that is a number, hex id, path or
  // timestamp becomes "<*>", digit runs inside other tokens become '#'.
  static std::vector<std::string> MaskTokens(std::string_view line, size_t max_tokens = 48);

  // Adds a line and returns its cluster id (>= 0), or -1 when the cluster budget is spent.
  int Add(std::string_view line);
  // The current template text of a cluster ("Epoch <*> loss <*>").
  std::string TemplateText(int id) const;
  size_t ClusterCount() const { return clusters_.size(); }
  // Lines assigned to a cluster so far.
  size_t ClusterSize(int id) const;

 private:
  struct Cluster {
    std::vector<std::string> tokens;
    size_t size = 0;
  };
  Options options_;
  std::vector<Cluster> clusters_;
  std::unordered_map<std::string, std::vector<int>> buckets_;  // "<count>|<first token>"
};

}  // namespace schedmate::text
