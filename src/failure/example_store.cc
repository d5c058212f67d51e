#include "failure/example_store.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/file_util.h"
#include "core/json_dump.h"

namespace schedmate::failure {

namespace {

constexpr uint32_t kBuckets = uint32_t{1} << 20;

bool LooksVolatile(std::string_view tok) {
  // Paths, URLs, e-mail/host@ forms and key=value blobs carry site data, not the failure mode.
  if (tok.find('/') != std::string_view::npos || tok.find('\\') != std::string_view::npos ||
      tok.find('@') != std::string_view::npos || tok.find("://") != std::string_view::npos) {
    return true;
  }
  // Hex literals (addresses) and long hex-ish ids (hashes, uuids).
  std::string_view core = tok;
  while (!core.empty() && !std::isalnum(static_cast<unsigned char>(core.front()))) {
    core.remove_prefix(1);
  }
  if (core.size() > 2 && core[0] == '0' && (core[1] == 'x' || core[1] == 'X')) return true;
  size_t hex = 0;
  for (char c : tok) {
    if (std::isxdigit(static_cast<unsigned char>(c)) || c == '-') ++hex;
  }
  return tok.size() >= 8 && hex == tok.size();
}

}  // namespace

std::string MaskLogLine(std::string_view line) {
  std::string out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    size_t j = i;
    while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
    std::string_view tok = line.substr(i, j - i);
    i = j;
    if (tok.empty() || LooksVolatile(tok)) continue;
    size_t k = 0;
    while (k < tok.size()) {
      while (k < tok.size() && !std::isalpha(static_cast<unsigned char>(tok[k]))) ++k;
      size_t e = k;
      while (e < tok.size() && (std::isalpha(static_cast<unsigned char>(tok[e])) || tok[e] == '_'))
        ++e;
      if (e - k >= 2) {
        if (!out.empty()) out += ' ';
        for (size_t q = k; q < e; ++q) {
          out += static_cast<char>(std::tolower(static_cast<unsigned char>(tok[q])));
        }
      }
      k = e;
    }
  }
  return out;
}

text::HashedTfIdf::Sparse ExampleStore::Featurize(std::string_view masked_text) {
  static const text::HashedTfIdf kHashing(kBuckets);  // never fitted: idf 1
  std::vector<std::string> words;
  size_t i = 0;
  while (i < masked_text.size()) {
    size_t j = masked_text.find(' ', i);
    if (j == std::string_view::npos) j = masked_text.size();
    if (j > i) words.emplace_back(masked_text.substr(i, j - i));
    i = j + 1;
  }
  return kHashing.Vectorize(kHashing.WordFeatures(words));
}

void ExampleStore::Add(FailureExample example) {
  vectors_.push_back(Featurize(example.text));
  examples_.push_back(std::move(example));
}

Status ExampleStore::Load(const std::string& path) {
  std::error_code ec;
  std::vector<std::string> files;
  if (std::filesystem::is_directory(path, ec)) {
    for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
      if (entry.path().extension() == ".jsonl") files.push_back(entry.path().string());
    }
    if (ec) return Status::DataLoss(path + ": cannot list: " + ec.message());
    std::sort(files.begin(), files.end());
  } else if (std::filesystem::exists(path, ec)) {
    files.push_back(path);
  } else {
    return Status::NotFound(path + ": no such examples file or directory");
  }
  for (const auto& file : files) {
    SM_ASSIGN_OR_RETURN(std::string text, ReadFileToString(file, size_t{256} << 20));
    std::istringstream in(text);
    std::string line;
    int line_no = 0;
    while (std::getline(in, line)) {
      ++line_no;
      std::string_view trimmed = line;
      while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back()))) {
        trimmed.remove_suffix(1);
      }
      if (trimmed.empty()) continue;
      std::string where = file + ":" + std::to_string(line_no) + ": ";
      nlohmann::json j = nlohmann::json::parse(trimmed, nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded() || !j.is_object()) {
        return Status::InvalidArgument(where + "not a JSON object");
      }
      auto get = [&](const char* key) -> std::optional<std::string> {
        auto it = j.find(key);
        if (it == j.end() || !it->is_string()) return std::nullopt;
        return it->get<std::string>();
      };
      auto label_name = get("label");
      auto label = label_name ? ParseFailureLabel(*label_name) : std::nullopt;
      if (!label || *label == FailureLabel::kUnknown) {
        return Status::InvalidArgument(where +
                                       "'label' must be \"infrastructure\" or \"application\"");
      }
      auto txt = get("text");
      if (!txt || txt->empty()) return Status::InvalidArgument(where + "missing 'text'");
      FailureExample ex;
      ex.label = *label;
      ex.category = get("category").value_or("");
      ex.text = MaskLogLine(*txt);  // re-mask: hand-written files may hold raw lines
      Add(std::move(ex));
    }
  }
  return Status::Ok();
}

Status ExampleStore::Append(const std::string& path, const FailureExample& example) {
  std::error_code ec;
  std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  if (ec) return Status::DataLoss(path + ": cannot create directory: " + ec.message());
  nlohmann::json j = {{"label", std::string(FailureLabelName(example.label))},
                      {"category", example.category},
                      {"text", example.text}};
  std::ofstream out(path, std::ios::app);
  if (!out) return Status::DataLoss(path + ": cannot open for appending");
  out << DumpJson(j) << "\n";
  out.flush();
  if (!out) return Status::DataLoss(path + ": write failed");
  return Status::Ok();
}

std::optional<NeighbourVote> ExampleStore::Vote(std::string_view masked_text, int k,
                                                double min_similarity) const {
  if (examples_.empty() || masked_text.empty()) return std::nullopt;
  const text::HashedTfIdf::Sparse q = Featurize(masked_text);
  std::vector<std::pair<double, size_t>> scored;
  for (size_t i = 0; i < vectors_.size(); ++i) {
    double s = text::SparseCosine(q, vectors_[i]);
    if (s >= min_similarity) scored.emplace_back(s, i);
  }
  if (scored.empty()) return std::nullopt;
  // Higher similarity first; equal similarity: the older example first.
  std::sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  if (static_cast<int>(scored.size()) > k) scored.resize(static_cast<size_t>(std::max(k, 1)));
  double total = 0;
  std::map<FailureLabel, double> vote;
  std::map<FailureLabel, std::pair<double, size_t>> best;  // best similarity per label
  for (const auto& [s, i] : scored) {
    total += s;
    vote[examples_[i].label] += s;
    auto it = best.find(examples_[i].label);
    if (it == best.end()) best[examples_[i].label] = {s, i};
  }
  std::optional<NeighbourVote> out;
  for (FailureLabel label : {FailureLabel::kInfrastructure, FailureLabel::kApplication}) {
    auto it = best.find(label);
    if (it == best.end()) continue;
    NeighbourVote v;
    v.label = label;
    v.similarity = it->second.first;
    v.example_index = it->second.second;
    v.category = examples_[v.example_index].category;
    v.score = v.similarity * (vote[label] / total);
    if (!out || v.score > out->score) out = v;
  }
  return out;
}

}  // namespace schedmate::failure
