#include "tracker/line_formats.h"

#include <fmt/format.h>
#include <re2/re2.h>
#include <re2/set.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>

#include "core/builtin_data.h"
#include "core/check.h"

namespace schedmate::tracker {

LineFormats::LineFormats() = default;
LineFormats::~LineFormats() = default;
LineFormats::LineFormats(LineFormats&&) noexcept = default;
LineFormats& LineFormats::operator=(LineFormats&&) noexcept = default;

namespace {

// Splits a rewrite template into ", "-separated pieces and resolves {name} references against
// the pattern's named groups.
Status ParsePieces(const std::string& rewrite, const re2::RE2& re,
                   std::vector<std::vector<int>>& groups, std::vector<std::string>& texts) {
  const std::map<std::string, int>& named = re.NamedCapturingGroups();
  size_t begin = 0;
  while (begin <= rewrite.size()) {
    size_t end = rewrite.find(", ", begin);
    if (end == std::string::npos) end = rewrite.size();
    std::string piece = rewrite.substr(begin, end - begin);
    std::vector<int> refs;
    for (size_t open = piece.find('{'); open != std::string::npos;
         open = piece.find('{', open + 1)) {
      const size_t close = piece.find('}', open);
      if (close == std::string::npos) return Status::InvalidArgument("unclosed '{' in rewrite");
      const std::string name = piece.substr(open + 1, close - open - 1);
      auto it = named.find(name);
      if (it == named.end()) {
        return Status::InvalidArgument("rewrite names {" + name + "}, not a group of the pattern");
      }
      refs.push_back(it->second);
    }
    if (!piece.empty()) {
      texts.push_back(std::move(piece));
      groups.push_back(std::move(refs));
    }
    if (end == rewrite.size()) break;
    begin = end + 2;
  }
  if (texts.empty()) return Status::InvalidArgument("empty rewrite");
  return Status::Ok();
}

}  // namespace

Result<LineFormats> LineFormats::Parse(std::string_view yaml, std::string_view source) {
  LineFormats out;
  out.set_ = std::make_unique<re2::RE2::Set>(re2::RE2::Options(), re2::RE2::UNANCHORED);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}:{}: {}", source, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap() || !root["formats"] || !root["formats"].IsSequence()) {
    return Status::InvalidArgument(fmt::format("{}: expected a map with a 'formats' list", source));
  }
  size_t i = 0;
  for (const YAML::Node& node : root["formats"]) {
    const std::string where = fmt::format("{}: formats[{}]", source, i++);
    auto text = [&](const char* key) -> std::string {
      const YAML::Node v = node[key];
      return v && v.IsScalar() ? v.as<std::string>() : std::string();
    };
    Format f;
    f.id = text("id");
    const std::string pattern = text("pattern");
    const std::string rewrite = text("rewrite");
    if (f.id.empty() || pattern.empty() || rewrite.empty() || text("source").empty()) {
      return Status::InvalidArgument(where + ": id, source, pattern and rewrite are required");
    }
    for (const Format& other : out.formats_) {
      if (other.id == f.id) return Status::InvalidArgument(where + ": duplicate id " + f.id);
    }
    f.re = std::make_unique<re2::RE2>(pattern, re2::RE2::Quiet);
    if (!f.re->ok()) {
      return Status::InvalidArgument(
          fmt::format("{} ({}): pattern: {}", where, f.id, f.re->error()));
    }
    std::vector<std::vector<int>> groups;
    std::vector<std::string> texts;
    if (Status s = ParsePieces(rewrite, *f.re, groups, texts); !s.ok()) {
      return Status::InvalidArgument(fmt::format("{} ({}): {}", where, f.id, s.message()));
    }
    for (size_t p = 0; p < texts.size(); ++p) f.pieces.push_back({texts[p], groups[p]});
    std::string error;
    if (out.set_->Add(pattern, &error) < 0) {
      return Status::InvalidArgument(fmt::format("{} ({}): pattern: {}", where, f.id, error));
    }
    out.formats_.push_back(std::move(f));
  }
  if (!out.set_->Compile()) {
    return Status::ResourceExhausted(source.empty() ? "formats: too large"
                                                    : std::string(source) + ": too large");
  }
  return out;
}

const LineFormats& LineFormats::Builtin() {
  static const LineFormats& kData =
      ParseBuiltinOrDie<LineFormats>(BuiltinFormatsYaml(), "builtin:tracker_formats.yaml");
  return kData;
}

int LineFormats::Find(std::string_view line) const {
  if (formats_.empty()) return -1;
  std::vector<int> hits;
  if (!set_->Match(line, &hits) || hits.empty()) return -1;
  int best = hits.front();
  for (int h : hits) best = std::min(best, h);  // file order decides between several formats
  return best;
}

bool LineFormats::Rewrite(int index, std::string_view line, std::string& out) const {
  if (index < 0 || static_cast<size_t>(index) >= formats_.size()) return false;
  const Format& f = formats_[static_cast<size_t>(index)];
  const int n = f.re->NumberOfCapturingGroups();
  std::vector<re2::StringPiece> groups(static_cast<size_t>(n) + 1);
  if (!f.re->Match(line, 0, line.size(), re2::RE2::UNANCHORED, groups.data(),
                   static_cast<int>(groups.size()))) {
    return false;
  }
  out.clear();
  for (const Piece& piece : f.pieces) {
    bool complete = true;
    for (int g : piece.groups) {
      if (groups[static_cast<size_t>(g)].data() == nullptr) complete = false;
    }
    if (!complete) continue;
    if (!out.empty()) out += ", ";
    // Replace the k-th {name} with the text of piece.groups[k] (resolved when the file was read).
    size_t pos = 0;
    for (int g : piece.groups) {
      const size_t open = piece.text.find('{', pos);
      const size_t close = piece.text.find('}', open);
      out.append(piece.text, pos, open - pos);
      const re2::StringPiece& v = groups[static_cast<size_t>(g)];
      out.append(v.data(), v.size());
      pos = close + 1;
    }
    out.append(piece.text, pos, std::string::npos);
  }
  return !out.empty();
}

bool FormatMatcher::Rewrite(uint64_t skeleton, std::string_view line, std::string& out) {
  if (formats_.size() == 0) return false;
  auto it = by_template_.find(skeleton);
  int index;
  if (it == by_template_.end()) {
    index = formats_.Find(line);
    if (by_template_.size() > 65536) by_template_.clear();
    by_template_.emplace(skeleton, index);
  } else {
    index = it->second;
  }
  return index >= 0 && formats_.Rewrite(index, line, out);
}

}  // namespace schedmate::tracker
