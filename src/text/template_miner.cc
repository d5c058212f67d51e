#include "text/template_miner.h"

#include <cctype>

namespace schedmate::text {
namespace {

bool IsVariable(std::string_view t) {
  size_t digits = 0, hex = 0, slashes = 0, alpha = 0;
  for (char ch : t) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (std::isdigit(c)) ++digits;
    if (std::isxdigit(c)) ++hex;
    if (c == '/' || c == '\\') ++slashes;
    if (std::isalpha(c)) ++alpha;
  }
  if (digits > 0 && alpha == 0) return true;  // numbers, times, dates, fractions
  if (t.size() >= 8 && hex == t.size() && digits > 0) return true;  // hex ids
  if (slashes >= 2) return true;                                    // paths
  return false;
}

}  // namespace

std::vector<std::string> TemplateMiner::MaskTokens(std::string_view line, size_t max_tokens) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < line.size() && out.size() < max_tokens) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t b = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i == b) break;
    std::string_view t = line.substr(b, i - b);
    if (IsVariable(t)) {
      out.emplace_back("<*>");
      continue;
    }
    std::string m;
    m.reserve(t.size());
    bool in_digits = false;
    for (char ch : t) {
      if (std::isdigit(static_cast<unsigned char>(ch))) {
        if (!in_digits) m.push_back('#');
        in_digits = true;
      } else {
        m.push_back(ch);
        in_digits = false;
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

int TemplateMiner::Add(std::string_view line) {
  std::vector<std::string> tokens = MaskTokens(line, options_.max_tokens);
  std::string key = std::to_string(tokens.size()) + "|" + (tokens.empty() ? "" : tokens[0]);
  std::vector<int>& bucket = buckets_[key];
  int best = -1;
  double best_sim = -1;
  for (int id : bucket) {
    const Cluster& c = clusters_[static_cast<size_t>(id)];
    size_t same = 0;
    for (size_t k = 0; k < tokens.size(); ++k) {
      if (c.tokens[k] == tokens[k] || c.tokens[k] == "<*>") ++same;
    }
    double sim =
        tokens.empty() ? 1.0 : static_cast<double>(same) / static_cast<double>(tokens.size());
    if (sim > best_sim) {  // ties: the older cluster (lower id) wins
      best_sim = sim;
      best = id;
    }
  }
  if (best >= 0 && best_sim >= options_.similarity) {
    Cluster& c = clusters_[static_cast<size_t>(best)];
    for (size_t k = 0; k < tokens.size(); ++k) {
      if (c.tokens[k] != tokens[k]) c.tokens[k] = "<*>";
    }
    ++c.size;
    return best;
  }
  if (clusters_.size() >= options_.max_clusters) return -1;
  if (bucket.size() >= options_.max_clusters_per_bucket) {
    // Bucket full: join the most similar cluster regardless of the threshold.
    if (best >= 0) {
      ++clusters_[static_cast<size_t>(best)].size;
      return best;
    }
  }
  clusters_.push_back(Cluster{std::move(tokens), 1});
  int id = static_cast<int>(clusters_.size()) - 1;
  bucket.push_back(id);
  return id;
}

std::string TemplateMiner::TemplateText(int id) const {
  if (id < 0 || static_cast<size_t>(id) >= clusters_.size()) return {};
  std::string out;
  for (const auto& t : clusters_[static_cast<size_t>(id)].tokens) {
    if (!out.empty()) out.push_back(' ');
    out += t;
  }
  return out;
}

size_t TemplateMiner::ClusterSize(int id) const {
  if (id < 0 || static_cast<size_t>(id) >= clusters_.size()) return 0;
  return clusters_[static_cast<size_t>(id)].size;
}

}  // namespace schedmate::text
