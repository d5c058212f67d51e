#include "failure/signature_set.h"

#include <re2/re2.h>
#include <re2/set.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>
#include <utility>

#include "core/file_util.h"

namespace schedmate::failure {

struct SignatureSet::Compiled {
  explicit Compiled(const RE2::Options& options)
      : lines(options, RE2::UNANCHORED), prefilter(options, RE2::UNANCHORED) {}
  RE2::Set lines;          // every pattern, matched per line
  std::vector<int> owner;  // pattern index -> signature index
  RE2::Set prefilter;      // non-benign patterns in multi-line mode, over whole chunks
  bool prefilter_empty = true;
};

namespace {

constexpr int64_t kMaxDfaMemory = int64_t{64} << 20;

int DefaultPriority(LineRole role) {
  switch (role) {
    case LineRole::kBenign:
      return 100;
    case LineRole::kTrace:
      return 90;
    case LineRole::kWrapper:
      return 60;
    case LineRole::kOrigin:
      return 50;
    case LineRole::kWeak:
      return 30;
    case LineRole::kNone:
      return 0;
  }
  return 0;
}

std::optional<LineRole> ParseRole(std::string_view s) {
  if (s == "origin") return LineRole::kOrigin;
  if (s == "weak") return LineRole::kWeak;
  if (s == "wrapper") return LineRole::kWrapper;
  if (s == "trace") return LineRole::kTrace;
  if (s == "benign") return LineRole::kBenign;
  return std::nullopt;
}

bool ValidId(std::string_view id) {
  if (id.empty() || id.size() > 100) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

// Parsing helpers: yaml-cpp throws; everything below runs inside one try block in AddYaml and
// reports "<source>:<line>: <where>: <what>".
struct Where {
  std::string_view source;
  std::string what;  // e.g. "signatures[3] (id 'x')"
  std::string At(const YAML::Node& node) const {
    int line = node.Mark().line >= 0 ? node.Mark().line + 1 : 0;
    return std::string(source) + ":" + std::to_string(line) + ": " + what;
  }
};

Status CheckKeys(const YAML::Node& map, const std::set<std::string>& allowed, const Where& where) {
  for (const auto& kv : map) {
    std::string key = kv.first.as<std::string>();
    if (!allowed.count(key)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return Status::InvalidArgument(where.At(kv.first) + ": unknown key '" + key +
                                     "' (known: " + list + ")");
    }
  }
  return Status::Ok();
}

Result<std::string> GetString(const YAML::Node& map, const char* key, const Where& where,
                              bool required) {
  YAML::Node n = map[key];
  if (!n) {
    if (required) return Status::InvalidArgument(where.At(map) + ": missing key '" + key + "'");
    return std::string();
  }
  if (!n.IsScalar()) {
    return Status::InvalidArgument(where.At(n) + ": '" + key + "' must be a string");
  }
  return n.as<std::string>();
}

Result<bool> GetBool(const YAML::Node& map, const char* key, const Where& where) {
  YAML::Node n = map[key];
  if (!n) return false;
  bool v = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) {
    return Status::InvalidArgument(where.At(n) + ": '" + key + "' must be true or false");
  }
  return v;
}

Result<FailureLabel> GetLabel(const YAML::Node& map, const Where& where) {
  YAML::Node n = map["label"];
  if (!n) return FailureLabel::kUnknown;
  std::string s = n.IsScalar() ? n.as<std::string>() : "";
  if (s == "none") return FailureLabel::kUnknown;
  auto label = ParseFailureLabel(s);
  if (!label || *label == FailureLabel::kUnknown) {
    return Status::InvalidArgument(where.At(n) + ": label '" + s +
                                   "' (want infrastructure, application or none)");
  }
  return *label;
}

// Calls `visit(entry, where)` for each entry of the list `root[section]` (none when absent);
// kInvalidArgument naming file:line when it is not a list or an entry is not a mapping, or the
// first error `visit` returns.
template <typename Visit>
Status ForEachMapping(const YAML::Node& root, const char* section, const Where& top,
                      std::string_view source, Visit&& visit) {
  const YAML::Node list = root[section];
  if (!list) return Status::Ok();
  if (!list.IsSequence()) {
    return Status::InvalidArgument(top.At(list) + ": '" + section + "' must be a list");
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node e = list[i];
    Where w{source, std::string(section) + "[" + std::to_string(i) + "]"};
    if (!e.IsMap()) return Status::InvalidArgument(w.At(e) + ": must be a mapping");
    SM_RETURN_IF_ERROR(visit(e, w));
  }
  return Status::Ok();
}

// One entry of `signatures:` (a mapping); `seen` holds the ids read so far from this file.
Result<Signature> ParseSignature(const YAML::Node& e, Where w, std::set<std::string>& seen) {
  SM_ASSIGN_OR_RETURN(std::string id, GetString(e, "id", w, /*required=*/true));
  w.what += " (id '" + id + "')";
  if (!ValidId(id)) {
    return Status::InvalidArgument(w.At(e["id"]) + ": id must be letters, digits, '_', '-', '.'");
  }
  if (!seen.insert(id).second) {
    return Status::InvalidArgument(w.At(e["id"]) + ": duplicate id in this file");
  }
  SM_RETURN_IF_ERROR(CheckKeys(
      e, {"id", "role", "priority", "label", "category", "weight", "symptom", "patterns"}, w));
  Signature sig;
  sig.id = id;
  sig.origin = w.At(e);
  SM_ASSIGN_OR_RETURN(std::string role, GetString(e, "role", w, /*required=*/false));
  if (!role.empty()) {
    auto r = ParseRole(role);
    if (!r) {
      return Status::InvalidArgument(w.At(e["role"]) + ": unknown role '" + role +
                                     "' (want origin, weak, wrapper, trace or benign)");
    }
    sig.role = *r;
  }
  sig.priority = DefaultPriority(sig.role);
  if (YAML::Node p = e["priority"]) {
    int v = 0;
    if (!p.IsScalar() || !YAML::convert<int>::decode(p, v) || v < 0 || v > 1000) {
      return Status::InvalidArgument(w.At(p) + ": priority must be an integer in [0, 1000]");
    }
    sig.priority = v;
  }
  SM_ASSIGN_OR_RETURN(sig.label, GetLabel(e, w));
  SM_ASSIGN_OR_RETURN(sig.category, GetString(e, "category", w, /*required=*/false));
  if (sig.label != FailureLabel::kUnknown && sig.category.empty()) {
    return Status::InvalidArgument(w.At(e) + ": a labelled signature needs a 'category'");
  }
  if (sig.role == LineRole::kBenign && sig.label != FailureLabel::kUnknown) {
    return Status::InvalidArgument(w.At(e) + ": a benign signature cannot carry a label");
  }
  if (YAML::Node wt = e["weight"]) {
    double v = -1;
    if (!wt.IsScalar() || !YAML::convert<double>::decode(wt, v) || !(v >= 0.0 && v <= 1.0)) {
      return Status::InvalidArgument(w.At(wt) + ": weight must be a number in [0, 1]");
    }
    sig.weight = v;
  }
  SM_ASSIGN_OR_RETURN(sig.symptom, GetBool(e, "symptom", w));
  if (sig.symptom && sig.label == FailureLabel::kUnknown) {
    return Status::InvalidArgument(w.At(e) + ": a symptom signature needs a 'label'");
  }
  YAML::Node pats = e["patterns"];
  if (!pats) return Status::InvalidArgument(w.At(e) + ": missing key 'patterns'");
  if (pats.IsScalar()) {
    sig.patterns.push_back(pats.as<std::string>());
  } else if (pats.IsSequence()) {
    for (size_t j = 0; j < pats.size(); ++j) {
      if (!pats[j].IsScalar()) {
        return Status::InvalidArgument(w.At(pats[j]) + ": patterns[" + std::to_string(j) +
                                       "] must be a string");
      }
      sig.patterns.push_back(pats[j].as<std::string>());
    }
  } else {
    return Status::InvalidArgument(w.At(pats) + ": 'patterns' must be a list of strings");
  }
  if (sig.patterns.empty()) return Status::InvalidArgument(w.At(pats) + ": no patterns");
  for (size_t j = 0; j < sig.patterns.size(); ++j) {
    if (sig.patterns[j].empty()) {
      return Status::InvalidArgument(w.At(pats) + ": patterns[" + std::to_string(j) + "] is empty");
    }
    RE2 probe(sig.patterns[j], RE2::Quiet);
    if (!probe.ok()) {
      return Status::InvalidArgument(w.At(pats) + ": patterns[" + std::to_string(j) +
                                     "]: invalid regular expression: " + probe.error());
    }
  }
  return sig;
}

// One entry of `categories:` (a mapping).
Result<CategoryInfo> ParseCategory(const YAML::Node& e, const Where& w) {
  SM_RETURN_IF_ERROR(
      CheckKeys(e, {"name", "label", "drain", "transient", "explanation", "hint"}, w));
  CategoryInfo c;
  SM_ASSIGN_OR_RETURN(c.name, GetString(e, "name", w, /*required=*/true));
  SM_ASSIGN_OR_RETURN(c.label, GetLabel(e, w));
  SM_ASSIGN_OR_RETURN(c.drain, GetBool(e, "drain", w));
  SM_ASSIGN_OR_RETURN(c.transient, GetBool(e, "transient", w));
  SM_ASSIGN_OR_RETURN(c.explanation, GetString(e, "explanation", w, false));
  SM_ASSIGN_OR_RETURN(c.hint, GetString(e, "hint", w, false));
  return c;
}

}  // namespace

SignatureSet::SignatureSet() = default;
SignatureSet::SignatureSet(SignatureSet&&) noexcept = default;
SignatureSet& SignatureSet::operator=(SignatureSet&&) noexcept = default;
SignatureSet::~SignatureSet() = default;

Result<SignatureSet> SignatureSet::Builtin() {
  SignatureSet set;
  SM_RETURN_IF_ERROR(set.AddYaml(BuiltinSignatureYaml(), "builtin:failure_signatures.yaml"));
  SM_RETURN_IF_ERROR(set.Compile());
  return set;
}

Status SignatureSet::AddFile(const std::string& path) {
  SM_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path, size_t{16} << 20));
  return AddYaml(text, path);
}

Status SignatureSet::AddYaml(std::string_view yaml, std::string_view source) {
  compiled_.reset();
  std::vector<Signature> added;
  std::vector<CategoryInfo> added_categories;
  try {
    YAML::Node root = YAML::Load(std::string(yaml));
    Where top{source, "document"};
    if (!root || root.IsNull())
      return Status::InvalidArgument(std::string(source) + ": empty document");
    if (!root.IsMap()) return Status::InvalidArgument(top.At(root) + ": must be a mapping");
    SM_RETURN_IF_ERROR(CheckKeys(root, {"version", "signatures", "categories"}, top));
    if (YAML::Node v = root["version"]) {
      int version = 0;
      if (!v.IsScalar() || !YAML::convert<int>::decode(v, version) || version != 1) {
        return Status::InvalidArgument(top.At(v) + ": unsupported version (want 1)");
      }
    }
    std::set<std::string> seen;
    SM_RETURN_IF_ERROR(
        ForEachMapping(root, "signatures", top, source, [&](const YAML::Node& e, const Where& w) {
          SM_ASSIGN_OR_RETURN(Signature sig, ParseSignature(e, w, seen));
          added.push_back(std::move(sig));
          return Status::Ok();
        }));
    SM_RETURN_IF_ERROR(
        ForEachMapping(root, "categories", top, source, [&](const YAML::Node& e, const Where& w) {
          SM_ASSIGN_OR_RETURN(CategoryInfo c, ParseCategory(e, w));
          added_categories.push_back(std::move(c));
          return Status::Ok();
        }));
  } catch (const YAML::Exception& e) {
    int line = e.mark.line >= 0 ? e.mark.line + 1 : 0;
    return Status::InvalidArgument(std::string(source) + ":" + std::to_string(line) +
                                   ": invalid YAML: " + e.msg);
  }
  for (auto& sig : added) {
    auto it = std::find_if(signatures_.begin(), signatures_.end(),
                           [&](const Signature& s) { return s.id == sig.id; });
    if (it != signatures_.end()) {
      *it = std::move(sig);  // an operator's entry replaces the built-in one with that id
    } else {
      signatures_.push_back(std::move(sig));
    }
  }
  for (auto& c : added_categories) categories_[c.name] = std::move(c);
  return Status::Ok();
}

Status SignatureSet::Compile() {
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(kMaxDfaMemory);
  auto compiled = std::make_unique<Compiled>(options);
  for (size_t s = 0; s < signatures_.size(); ++s) {
    const Signature& sig = signatures_[s];
    for (size_t j = 0; j < sig.patterns.size(); ++j) {
      std::string error;
      if (compiled->lines.Add(sig.patterns[j], &error) < 0) {
        return Status::InvalidArgument(sig.origin + ": patterns[" + std::to_string(j) +
                                       "]: invalid regular expression: " + error);
      }
      compiled->owner.push_back(static_cast<int>(s));
      if (sig.role != LineRole::kBenign) {
        if (compiled->prefilter.Add("(?m)" + sig.patterns[j], &error) < 0) {
          return Status::InvalidArgument(sig.origin + ": patterns[" + std::to_string(j) +
                                         "]: invalid in multi-line mode: " + error);
        }
        compiled->prefilter_empty = false;
      }
    }
  }
  if (!compiled->lines.Compile() || !compiled->prefilter.Compile()) {
    return Status::ResourceExhausted(
        "failure signatures: regular expressions too large to compile");
  }
  compiled_ = std::move(compiled);
  return Status::Ok();
}

std::string StripAnsi(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\x1b') {
      out += line[i];
      continue;
    }
    if (i + 1 < line.size() && line[i + 1] == '[') {
      // CSI: ESC [ parameters intermediates final-byte.
      size_t j = i + 2;
      while (j < line.size() && static_cast<unsigned char>(line[j]) >= 0x20 &&
             static_cast<unsigned char>(line[j]) <= 0x3F) {
        ++j;
      }
      while (j < line.size() && static_cast<unsigned char>(line[j]) >= 0x20 &&
             static_cast<unsigned char>(line[j]) <= 0x2F) {
        ++j;
      }
      i = j < line.size() ? j : line.size() - 1;  // skip the final byte too
    } else if (i + 1 < line.size()) {
      ++i;  // a two-byte escape
    }
  }
  return out;
}

LineMatch SignatureSet::MatchLine(std::string_view line) const {
  SM_CHECK(compiled_ != nullptr) << "SignatureSet::MatchLine before Compile()";
  LineMatch m;
  std::string stripped;
  if (line.find('\x1b') != std::string_view::npos) {
    stripped = StripAnsi(line);  // coloured output (loguru, rich): match the visible text
    line = stripped;
  }
  std::vector<int> hits;
  // Over-long lines (pastes that lost their newlines) are matched in overlapping windows so the
  // DFA's memory stays bounded; the union of the hits counts.
  constexpr size_t kOverlap = 4096;
  for (size_t pos = 0; pos < line.size() || pos == 0;) {
    std::string_view window = line.substr(pos, kMaxLineBytes);
    std::vector<int> part;
    RE2::Set::ErrorInfo info{};
    if (compiled_->lines.Match(re2::StringPiece(window.data(), window.size()), &part, &info)) {
      hits.insert(hits.end(), part.begin(), part.end());
    }
    if (pos + kMaxLineBytes >= line.size()) break;
    pos += kMaxLineBytes - kOverlap;
  }
  if (hits.empty()) return m;
  // Deterministic regardless of the order RE2 reports hits in.
  std::vector<int> sigs;
  sigs.reserve(hits.size());
  for (int h : hits) sigs.push_back(compiled_->owner[static_cast<size_t>(h)]);
  std::sort(sigs.begin(), sigs.end());
  sigs.erase(std::unique(sigs.begin(), sigs.end()), sigs.end());
  int role_sig = -1;
  for (int s : sigs) {
    if (role_sig < 0 || signatures_[s].priority > signatures_[role_sig].priority) role_sig = s;
  }
  if (role_sig < 0) return m;
  m.role = signatures_[role_sig].role;
  if (m.role == LineRole::kBenign) return m;
  for (int s : sigs) {
    const Signature& sig = signatures_[s];
    if (sig.label == FailureLabel::kUnknown) continue;
    if (m.labelled < 0) {
      m.labelled = s;
      continue;
    }
    const Signature& best = signatures_[m.labelled];
    if (sig.priority > best.priority ||
        (sig.priority == best.priority && sig.weight > best.weight)) {
      m.labelled = s;
    }
  }
  return m;
}

bool SignatureSet::MayContainFailure(std::string_view text) const {
  SM_CHECK(compiled_ != nullptr) << "SignatureSet::MayContainFailure before Compile()";
  if (compiled_->prefilter_empty) return false;
  RE2::Set::ErrorInfo info{};
  if (compiled_->prefilter.Match(re2::StringPiece(text.data(), text.size()), nullptr, &info)) {
    return true;
  }
  // The DFA ran out of memory: say "maybe" and let the caller look line by line.
  return info.kind != RE2::Set::kNoError;
}

const CategoryInfo* SignatureSet::FindCategory(std::string_view name) const {
  auto it = categories_.find(name);
  return it == categories_.end() ? nullptr : &it->second;
}

}  // namespace schedmate::failure
