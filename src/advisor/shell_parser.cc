#include "advisor/shell_parser.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <set>

#include "core/strings.h"

namespace schedmate::advisor {
namespace {

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `NAME=value` or `NAME+=value` (`*append` says which; append may be null).
bool IsAssignment(std::string_view w, std::string* name, std::string* value,
                  bool* append = nullptr) {
  size_t eq = w.find('=');
  if (eq == std::string_view::npos || eq == 0) return false;
  const bool plus = w[eq - 1] == '+' && eq >= 2;
  const size_t end = plus ? eq - 1 : eq;
  for (size_t i = 0; i < end; ++i) {
    if (!IsNameChar(w[i]) || (i == 0 && std::isdigit(static_cast<unsigned char>(w[i]))))
      return false;
  }
  if (plus && append == nullptr) return false;
  if (append != nullptr) *append = plus;
  *name = std::string(w.substr(0, end));
  *value = std::string(w.substr(eq + 1));
  return true;
}

// Integer arithmetic of `$(( ... ))` after parameter expansion: + - * / % and parentheses, on
// 64-bit integers; nullopt for anything else (a name left unset, division by zero, overflow).
class Arithmetic {
 public:
  explicit Arithmetic(std::string_view s) : s_(s) {}
  std::optional<int64_t> Eval() {
    auto v = Sum();
    Skip();
    if (!v || i_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  void Skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  std::optional<int64_t> Sum() {
    auto v = Product();
    while (v) {
      Skip();
      if (i_ >= s_.size() || (s_[i_] != '+' && s_[i_] != '-')) break;
      char op = s_[i_++];
      auto r = Product();
      if (!r) return std::nullopt;
      int64_t out = 0;
      if (op == '+' ? __builtin_add_overflow(*v, *r, &out) : __builtin_sub_overflow(*v, *r, &out))
        return std::nullopt;
      v = out;
    }
    return v;
  }
  std::optional<int64_t> Product() {
    auto v = Unary();
    while (v) {
      Skip();
      if (i_ >= s_.size() || (s_[i_] != '*' && s_[i_] != '/' && s_[i_] != '%')) break;
      char op = s_[i_++];
      auto r = Unary();
      if (!r) return std::nullopt;
      int64_t out = 0;
      if (op == '*') {
        if (__builtin_mul_overflow(*v, *r, &out)) return std::nullopt;
      } else {
        if (*r == 0 || (*v == INT64_MIN && *r == -1)) return std::nullopt;
        out = op == '/' ? *v / *r : *v % *r;
      }
      v = out;
    }
    return v;
  }
  std::optional<int64_t> Unary() {
    Skip();
    if (i_ < s_.size() && (s_[i_] == '-' || s_[i_] == '+')) {
      char op = s_[i_++];
      auto v = Unary();
      if (!v || *v == INT64_MIN) return std::nullopt;
      return op == '-' ? -*v : *v;
    }
    if (i_ < s_.size() && s_[i_] == '(') {
      ++i_;
      auto v = Sum();
      Skip();
      if (!v || i_ >= s_.size() || s_[i_] != ')') return std::nullopt;
      ++i_;
      return v;
    }
    size_t b = i_;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    if (b == i_ || i_ - b > 18) return std::nullopt;
    return ParseInt(s_.substr(b, i_ - b));
  }
  std::string_view s_;
  size_t i_ = 0;
};

// The end (one past the closing parenthesis) of the command substitution whose '(' is at
// s[open]; nested parentheses and quoted text inside are stepped over. s.size() when unclosed.
size_t SubstitutionEnd(std::string_view s, size_t open) {
  int depth = 0;
  char quote = 0;
  for (size_t i = open; i < s.size(); ++i) {
    char c = s[i];
    if (quote != 0) {
      if (c == '\\' && quote == '"')
        ++i;
      else if (c == quote)
        quote = 0;
      continue;
    }
    if (c == '"' || c == '\'')
      quote = c;
    else if (c == '(')
      ++depth;
    else if (c == ')' && --depth == 0)
      return i + 1;
  }
  return s.size();
}

// Whether the text inside `$( ... )` is one of the idioms that name the script's own directory:
// dirname of $0 or ${BASH_SOURCE[0]} (optionally through realpath / readlink -f), optionally
// inside `cd ... && pwd`.
bool IsScriptDirIdiom(std::string_view inner) {
  std::string t;
  for (char c : inner) {
    if (c != '"' && c != '\'') t.push_back(c);
  }
  std::string_view v = Trim(t);
  if (StartsWith(v, "cd ")) {  // cd $(dirname $0) && pwd [-P]
    v = Trim(v.substr(3));
    size_t amp = v.rfind("&&");
    if (amp == std::string_view::npos) return false;
    std::string_view tail = Trim(v.substr(amp + 2));
    if (tail != "pwd" && tail != "pwd -P") return false;
    v = Trim(v.substr(0, amp));
    if (!StartsWith(v, "$(") || v.back() != ')') return false;
    v = Trim(v.substr(2, v.size() - 3));
  }
  if (!StartsWith(v, "dirname ")) return false;
  v = Trim(v.substr(8));
  for (std::string_view wrap : {"$(realpath ", "$(readlink -f "}) {
    if (StartsWith(v, wrap) && v.back() == ')')
      v = Trim(v.substr(wrap.size(), v.size() - wrap.size() - 1));
  }
  return v == "$0" || v == "${0}" || v == "${BASH_SOURCE[0]}" || v == "${BASH_SOURCE}" ||
         v == "$BASH_SOURCE";
}

// A raw word: pieces of text, each either quoted (no splitting) or not.
struct Piece {
  std::string text;
  bool quoted;
  bool single;  // single-quoted: no expansion
};
struct RawWord {
  std::vector<Piece> pieces;
  int line;
};

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}
  // Next command's raw words (empty vector + false at end). `sep_newline` reports the separator.
  bool NextCommand(std::vector<RawWord>& words, int& line) {
    words.clear();
    line = 0;
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '\\' && i_ + 1 < s_.size() && s_[i_ + 1] == '\n') {
        i_ += 2;
        ++line_;
        continue;
      }
      if (c == '\\' && i_ + 2 < s_.size() && s_[i_ + 1] == '\r' && s_[i_ + 2] == '\n') {
        i_ += 3;
        ++line_;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r') {
        ++i_;
        continue;
      }
      if (c == '#') {
        size_t e = s_.find('\n', i_);
        i_ = e == std::string_view::npos ? s_.size() : e;
        continue;
      }
      if (c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')') {
        if (c == '\n') ++line_;
        ++i_;
        if ((c == '&' || c == '|' || c == ';') && i_ < s_.size() && s_[i_] == c) ++i_;
        if (!words.empty()) return true;
        continue;
      }
      if (words.empty()) line = line_;
      words.push_back(ReadWord());
    }
    return !words.empty();
  }

 private:
  RawWord ReadWord() {
    RawWord w{{}, line_};
    Piece cur{"", false, false};
    auto push = [&] {
      if (!cur.text.empty() || cur.quoted) w.pieces.push_back(cur);
      cur = Piece{"", false, false};
    };
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '\r' ||
          c == '(' || c == ')') {
        if ((c == '(' || c == ')') && !cur.text.empty() && cur.text.back() == '$') {
          // $( ... ): keep the substitution text, balanced.
          int depth = 0;
          while (i_ < s_.size()) {
            char d = s_[i_];
            cur.text.push_back(d);
            ++i_;
            if (d == '(') ++depth;
            if (d == ')' && --depth == 0) break;
            if (d == '\n') ++line_;
          }
          continue;
        }
        break;
      }
      if (c == '$' && i_ + 1 < s_.size() && s_[i_ + 1] == '{') {
        // ${NAME:-"default"}: the braces hold their quotes; the expander reads them.
        size_t e = i_ + 2;
        char quote = 0;
        while (e < s_.size() && (quote != 0 || s_[e] != '}')) {
          if (quote == 0 && (s_[e] == '"' || s_[e] == '\''))
            quote = s_[e];
          else if (s_[e] == quote)
            quote = 0;
          if (s_[e] == '\n') break;
          ++e;
        }
        if (e < s_.size() && s_[e] == '}') {
          cur.text.append(s_.substr(i_, e + 1 - i_));
          i_ = e + 1;
          continue;
        }
      }
      if (c == '\\' && i_ + 1 < s_.size()) {
        if (s_[i_ + 1] == '\n') {
          i_ += 2;
          ++line_;
          continue;
        }
        push();
        w.pieces.push_back({std::string(1, s_[i_ + 1]), true, true});
        i_ += 2;
        continue;
      }
      if (c == '\'') {
        push();
        size_t e = s_.find('\'', i_ + 1);
        if (e == std::string_view::npos) e = s_.size();
        std::string body(s_.substr(i_ + 1, e - i_ - 1));
        for (char b : body) line_ += b == '\n';
        w.pieces.push_back({body, true, true});
        i_ = e + 1;
        continue;
      }
      if (c == '"') {
        push();
        std::string body;
        ++i_;
        while (i_ < s_.size() && s_[i_] != '"') {
          if (s_[i_] == '$' && i_ + 1 < s_.size() && s_[i_ + 1] == '(') {
            size_t e = SubstitutionEnd(s_, i_ + 1);
            std::string_view sub = s_.substr(i_, e - i_);
            for (char b : sub) line_ += b == '\n';
            body.append(sub);
            i_ = e;
            continue;
          }
          if (s_[i_] == '\\' && i_ + 1 < s_.size()) {
            char n = s_[i_ + 1];
            if (n == '\n') {
              ++line_;
              i_ += 2;
              continue;
            }
            if (n == '"' || n == '\\' || n == '$' || n == '`') {
              body.push_back('\\');  // keep escape marker for the expander
              body.push_back(n);
              i_ += 2;
              continue;
            }
          }
          if (s_[i_] == '\n') ++line_;
          body.push_back(s_[i_]);
          ++i_;
        }
        ++i_;
        w.pieces.push_back({body, true, false});
        continue;
      }
      if (c == '`') {
        size_t e = s_.find('`', i_ + 1);
        if (e == std::string_view::npos) e = s_.size();
        cur.text += std::string(s_.substr(i_, e - i_ + 1));
        i_ = e + 1;
        continue;
      }
      cur.text.push_back(c);
      ++i_;
    }
    push();
    return w;
  }

  std::string_view s_;
  size_t i_ = 0;
  int line_ = 1;
};

class Expander {
 public:
  Expander(std::map<std::string, std::string>& vars, const std::vector<std::string>& pos,
           const ShellContext& ctx)
      : vars_(vars), pos_(pos), ctx_(ctx) {}

  // Expands $... in `s` (not single-quoted). Escaped characters (\x) are kept literal.
  std::string Expand(std::string_view s, bool& unknown) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      char c = s[i];
      if (c == '\\' && i + 1 < s.size()) {
        out.push_back(s[++i]);
        continue;
      }
      if (c == '`') {
        unknown = true;
        out.push_back(c);
        continue;
      }
      if (c != '$' || i + 1 >= s.size()) {
        out.push_back(c);
        continue;
      }
      char n = s[i + 1];
      if (n == '(' && i + 2 < s.size() && s[i + 2] == '(') {
        // $(( arithmetic )): names inside may be written without '$'.
        size_t e = SubstitutionEnd(s, i + 1);
        if (e <= s.size() && e >= i + 5 && s[e - 2] == ')') {
          bool u = false;
          std::string inner = Expand(s.substr(i + 3, e - i - 5), u);
          std::string resolved;
          for (size_t k = 0; k < inner.size();) {
            if (IsNameChar(inner[k]) && !std::isdigit(static_cast<unsigned char>(inner[k]))) {
              size_t b = k;
              while (k < inner.size() && IsNameChar(inner[k])) ++k;
              auto v = Lookup(inner.substr(b, k - b));
              resolved += v ? *v : std::string("x");  // unset: not a number
              continue;
            }
            resolved.push_back(inner[k++]);
          }
          if (auto v = Arithmetic(resolved).Eval(); v && !u) {
            out += std::to_string(*v);
            i = e - 1;
            continue;
          }
        }
        unknown = true;
        out.push_back(c);
        continue;
      }
      if (n == '(') {
        size_t e = SubstitutionEnd(s, i + 1);
        if (!ctx_.script_dir.empty() && e <= s.size() && e > i + 2 &&
            IsScriptDirIdiom(s.substr(i + 2, e - i - 3))) {
          out += ctx_.script_dir;
          i = e - 1;
          continue;
        }
        unknown = true;
        out.push_back(c);
        continue;
      }
      if (n == '{') {
        size_t e = s.find('}', i + 2);
        if (e == std::string_view::npos) {
          out.push_back(c);
          continue;
        }
        std::string inner(s.substr(i + 2, e - i - 2));
        i = e;
        std::string name = inner, op, arg;
        size_t k = 0;
        while (k < inner.size() && IsNameChar(inner[k])) ++k;
        if (k < inner.size()) {
          name = inner.substr(0, k);
          std::string rest = inner.substr(k);
          if (StartsWith(rest, ":-") || StartsWith(rest, ":=")) {
            op = rest.substr(0, 2);
            arg = rest.substr(2);
          } else if (!rest.empty() && (rest[0] == '-' || rest[0] == '=')) {
            op = rest.substr(0, 1);
            arg = rest.substr(1);
          } else {
            unknown = true;
          }
        }
        std::optional<std::string> v = Lookup(name);
        if ((!v || (v->empty() && op.size() == 2)) && !op.empty()) {
          bool u = false;
          if (arg.size() >= 2 && (arg.front() == '"' || arg.front() == '\'') &&
              arg.back() == arg.front())
            arg = arg.substr(1, arg.size() - 2);
          std::string d = Expand(arg, u);
          unknown |= u;
          if (op.find('=') != std::string::npos) vars_[name] = d;
          out += d;
        } else if (v) {
          out += *v;
        } else {
          unknown = true;
          out += "${" + inner + "}";
        }
        continue;
      }
      if (std::isdigit(static_cast<unsigned char>(n)) || n == '@' || n == '*' || n == '#') {
        ++i;
        if (n == '@' || n == '*') {
          for (size_t k = 0; k < pos_.size(); ++k) out += (k ? " " : "") + pos_[k];
          if (pos_.empty()) unknown = true;
        } else if (n == '#') {
          out += std::to_string(pos_.size());
        } else if (n == '0' && !ctx_.script_path.empty()) {
          out += ctx_.script_path;
        } else {
          size_t idx = static_cast<size_t>(n - '0');
          if (idx >= 1 && idx <= pos_.size()) {
            out += pos_[idx - 1];
          } else {
            unknown = true;
            out += std::string("$") + n;
          }
        }
        continue;
      }
      if (IsNameChar(n)) {
        size_t e = i + 1;
        while (e < s.size() && IsNameChar(s[e])) ++e;
        std::string name(s.substr(i + 1, e - i - 1));
        i = e - 1;
        if (auto v = Lookup(name)) {
          out += *v;
        } else {
          unknown = true;
          out += "$" + name;
        }
        continue;
      }
      out.push_back(c);
    }
    return out;
  }

  // Expands a raw word into zero or more words (unquoted expansions are split on blanks).
  std::vector<ShellWord> ExpandWord(const RawWord& w) {
    std::vector<ShellWord> out;
    // "$@" alone: one word per positional parameter (none when there are none).
    if (w.pieces.size() == 1 && w.pieces[0].quoted && !w.pieces[0].single &&
        (w.pieces[0].text == "$@" || w.pieces[0].text == "${@}")) {
      for (const std::string& p : pos_) out.push_back({p, false});
      return out;
    }
    ShellWord cur;
    bool have = false;
    for (const Piece& p : w.pieces) {
      bool unknown = false;
      std::string text = p.single ? p.text : Expand(p.text, unknown);
      cur.unknown |= unknown;
      if (p.quoted) {
        cur.text += text;
        have = true;
        continue;
      }
      // Unquoted: split on blanks when the text came from an expansion.
      bool from_expansion = p.text.find('$') != std::string::npos;
      if (!from_expansion) {
        cur.text += text;
        have = have || !text.empty();
        continue;
      }
      size_t i = 0;
      while (i < text.size()) {
        if (std::isspace(static_cast<unsigned char>(text[i]))) {
          if (have) {
            out.push_back(cur);
            cur = ShellWord{};
            have = false;
          }
          ++i;
          continue;
        }
        cur.text.push_back(text[i]);
        have = true;
        ++i;
      }
    }
    if (have) out.push_back(cur);
    return out;
  }

 private:
  std::optional<std::string> Lookup(const std::string& name) {
    if (!name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
          return std::isdigit(static_cast<unsigned char>(ch));
        })) {  // ${N}: a positional parameter; ${0}: the script
      auto idx = ParseInt(name);
      if (idx && *idx == 0 && !ctx_.script_path.empty()) return ctx_.script_path;
      if (idx && *idx >= 1 && static_cast<size_t>(*idx) <= pos_.size())
        return pos_[static_cast<size_t>(*idx) - 1];
      return std::nullopt;
    }
    auto it = vars_.find(name);
    if (it != vars_.end()) return it->second;
    return std::nullopt;
  }
  std::map<std::string, std::string>& vars_;
  const std::vector<std::string>& pos_;
  const ShellContext& ctx_;
};

}  // namespace

std::vector<SbatchDirective> ParseSbatchOptions(const std::vector<std::string>& words, int line) {
  static const std::set<std::string> kShortWithValue = {"-N", "-n", "-c", "-t", "-p", "-G", "-A",
                                                        "-J", "-o", "-e", "-w", "-x", "-q", "-D"};
  std::vector<SbatchDirective> out;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (StartsWith(w, "--")) {
      size_t eq = w.find('=');
      if (eq != std::string::npos) {
        out.push_back({w.substr(0, eq), w.substr(eq + 1), line});
      } else if (i + 1 < words.size() && !StartsWith(words[i + 1], "-")) {
        out.push_back({w, words[i + 1], line});
        ++i;
      } else {
        out.push_back({w, "", line});
      }
    } else if (StartsWith(w, "-") && w.size() >= 2) {
      std::string opt = w.substr(0, 2);
      if (w.size() > 2) {
        std::string v = w.substr(2);
        if (!v.empty() && v[0] == '=') v = v.substr(1);
        out.push_back({opt, v, line});
      } else if (kShortWithValue.count(opt) && i + 1 < words.size()) {
        out.push_back({opt, words[i + 1], line});
        ++i;
      } else {
        out.push_back({opt, "", line});
      }
    } else {
      break;  // first non-option: the script
    }
  }
  return out;
}

void SeedSlurmEnvironment(const std::vector<SbatchDirective>& sbatch,
                          std::map<std::string, std::string>& vars) {
  // Last directive wins, as in sbatch. Only whole numbers: ranges ("2-4") and expressions are not
  // what the job will see.
  std::map<std::string, std::string> got;
  auto whole = [](const std::string& v) {
    auto n = ParseInt(v);
    return n.has_value() && *n > 0;
  };
  auto count_after_colon = [](const std::string& v) {  // "[type:]N" / "gpu[:type]:N" -> "N"
    size_t colon = v.find_last_of(':');
    return colon == std::string::npos ? v : v.substr(colon + 1);
  };
  for (const SbatchDirective& d : sbatch) {
    const std::string& o = d.option;
    if ((o == "--nodes" || o == "-N") && whole(d.value)) {
      got["SLURM_NNODES"] = got["SLURM_JOB_NUM_NODES"] = d.value;
    } else if ((o == "--ntasks" || o == "-n") && whole(d.value)) {
      got["SLURM_NTASKS"] = got["SLURM_NPROCS"] = d.value;
    } else if (o == "--ntasks-per-node" && whole(d.value)) {
      got["SLURM_NTASKS_PER_NODE"] = d.value;
    } else if ((o == "--cpus-per-task" || o == "-c") && whole(d.value)) {
      got["SLURM_CPUS_PER_TASK"] = d.value;
    } else if (o == "--gpus-per-node") {
      std::string v = count_after_colon(d.value);
      if (whole(v)) got["SLURM_GPUS_PER_NODE"] = got["SLURM_GPUS_ON_NODE"] = v;
    } else if (o == "--gres" && StartsWith(d.value, "gpu:")) {
      std::string v = count_after_colon(d.value);
      if (whole(v)) got["SLURM_GPUS_ON_NODE"] = v;
    }
  }
  for (auto& [k, v] : got) vars.emplace(k, v);  // the caller's environment wins
}

namespace {

// A function's body as text to parse where the function is called: everything before the body
// is reduced to its newlines, so line numbers stay those of the file.
struct ShellFunction {
  std::string body;
  std::string file;  // "" = the parsed text itself
};

// Whether text[i] starts or ends a word (for `{` / `}` as reserved words).
bool WordBoundary(std::string_view t, size_t i) {
  return i >= t.size() || t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r' ||
         t[i] == ';';
}

// The offset one past the `}` closing the body whose `{` is at text[open]; npos when unclosed.
// Quotes, ${...} expansions and comments are stepped over; braces count only as whole words.
size_t BodyEnd(std::string_view t, size_t open) {
  int depth = 0;
  for (size_t i = open; i < t.size(); ++i) {
    char c = t[i];
    if (c == '\\') {
      ++i;
    } else if (c == '\'' || c == '"') {
      size_t e = i + 1;
      while (e < t.size() && t[e] != c) e += (c == '"' && t[e] == '\\') ? 2 : 1;
      i = e;
    } else if (c == '$' && i + 1 < t.size() && t[i + 1] == '{') {
      size_t e = t.find('}', i);
      if (e == std::string_view::npos) return std::string_view::npos;
      i = e;
    } else if (c == '#' && (i == 0 || WordBoundary(t, i - 1))) {
      size_t e = t.find('\n', i);
      if (e == std::string_view::npos) return std::string_view::npos;
      i = e;
    } else if (c == '{' && (i == 0 || WordBoundary(t, i - 1)) && WordBoundary(t, i + 1)) {
      ++depth;
    } else if (c == '}' && (i == 0 || WordBoundary(t, i - 1)) && WordBoundary(t, i + 1)) {
      if (--depth == 0) return i + 1;
    }
  }
  return std::string_view::npos;
}

// Cuts the function definitions (`name() {`, `function name {`, `function name() {`; the brace
// may open the next line) out of `text`: returns the text with each definition blanked (newlines
// kept) and adds the bodies to `functions`.
std::string CutFunctions(std::string_view text, const std::string& file,
                         std::map<std::string, ShellFunction>& functions) {
  std::string out(text);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = Trim(text.substr(pos, eol - pos));
    size_t next = eol + 1;
    bool keyword = StartsWith(line, "function ") || StartsWith(line, "function\t");
    std::string_view rest = keyword ? Trim(line.substr(9)) : line;
    size_t n = 0;
    while (n < rest.size() && (IsNameChar(rest[n]) || (n > 0 && rest[n] == '-'))) ++n;
    std::string_view after = Trim(rest.substr(n));
    bool parens = StartsWith(after, "(");
    if (parens) {
      after = Trim(after.substr(1));
      if (!StartsWith(after, ")")) {
        pos = next;
        continue;
      }
      after = Trim(after.substr(1));
    }
    if (n == 0 || std::isdigit(static_cast<unsigned char>(rest[0])) || (!keyword && !parens) ||
        !(after.empty() || after == "{" || StartsWith(after, "{ ") || after == "{\r")) {
      pos = next;
      continue;
    }
    // The opening brace: on this line, or the first word of the next non-blank line.
    size_t open = std::string_view::npos;
    if (!after.empty()) {
      open = static_cast<size_t>(after.data() - text.data());  // `after` is a view into text
    } else {
      size_t k = next;
      while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
      if (k < text.size() && text[k] == '{' && WordBoundary(text, k + 1)) open = k;
    }
    size_t close = open == std::string_view::npos ? open : BodyEnd(text, open);
    if (close == std::string_view::npos) {
      pos = next;
      continue;
    }
    ShellFunction f;
    f.file = file;
    f.body.assign(static_cast<size_t>(std::count(text.begin(), text.begin() + open + 1, '\n')),
                  '\n');
    f.body.append(text.substr(open + 1, close - 1 - (open + 1)));
    functions[std::string(rest.substr(0, n))] = std::move(f);
    for (size_t k = pos; k < close; ++k) {
      if (out[k] != '\n') out[k] = ' ';
    }
    pos = close;
  }
  return out;
}

// Reads commands out of a script, its functions' bodies where they are called and the files it
// sources; one instance per ParseShell call.
class ShellReader {
 public:
  ShellReader(const ShellContext& ctx, ShellScript& script)
      : ctx_(ctx), script_(script), vars_(ctx.variables) {
    SeedSlurmEnvironment(script_.sbatch, vars_);
  }

  // The parsed text itself: its function definitions first, then its commands.
  void RunScript(std::string_view text) {
    Run(CutFunctions(text, "", functions_), ctx_.positional, "", "", 0);
  }
  void Run(std::string_view text, std::vector<std::string> positional, const std::string& file,
           const std::string& function, int depth);

 private:
  // Runs `cmd` when it calls a function or sources a file; false when it is an ordinary command.
  bool Expand(const ShellCommand& cmd, int depth, const std::vector<std::string>& positional);

  static constexpr int kMaxDepth = 8;
  const ShellContext& ctx_;
  ShellScript& script_;
  std::map<std::string, std::string> vars_;
  std::map<std::string, ShellFunction> functions_;
  std::set<std::string> sourcing_;  // files being sourced (a file sourcing itself stops there)
};

bool ShellReader::Expand(const ShellCommand& cmd, int depth,
                         const std::vector<std::string>& positional) {
  const std::string& w0 = cmd.words[0].text;
  if (auto f = functions_.find(w0); f != functions_.end() && !cmd.words[0].unknown) {
    if (depth >= kMaxDepth) return true;
    std::vector<std::string> args;
    for (size_t k = 1; k < cmd.words.size(); ++k) args.push_back(cmd.words[k].text);
    ShellFunction fn = f->second;  // the call may redefine it
    Run(CutFunctions(fn.body, fn.file, functions_), args, fn.file, w0, depth + 1);
    return true;
  }
  if ((w0 == "." || w0 == "source") && cmd.words.size() >= 2 && ctx_.source &&
      cmd.words[1].text != "activate" && !cmd.words[1].unknown) {
    auto got = ctx_.source(cmd.words[1].text);
    if (!got) return false;
    if (depth >= kMaxDepth || !sourcing_.insert(got->second).second) return true;
    script_.sourced.push_back(got->second);
    std::vector<std::string> args = positional;
    if (cmd.words.size() > 2) {
      args.clear();
      for (size_t k = 2; k < cmd.words.size(); ++k) args.push_back(cmd.words[k].text);
    }
    Run(CutFunctions(got->first, got->second, functions_), args, got->second, cmd.function,
        depth + 1);
    sourcing_.erase(got->second);
    return true;
  }
  return false;
}

void ShellReader::Run(std::string_view text, std::vector<std::string> positional,
                      const std::string& file, const std::string& function, int depth) {
  std::map<std::string, std::string>& vars = vars_;
  ShellScript& script = script_;
  Expander ex(vars, positional, ctx_);
  Lexer lex(text);
  std::vector<RawWord> raw;
  int line = 0;
  static const std::set<std::string> kKeywords = {"if",   "then",  "else",  "elif", "fi", "do",
                                                  "done", "while", "until", "{",    "}",  "!",
                                                  "time", "nohup", "exec",  "esac", "in"};
  while (lex.NextCommand(raw, line)) {
    size_t k = 0;
    // Skip compound-command keywords.
    while (k < raw.size() && raw[k].pieces.size() == 1 && !raw[k].pieces[0].quoted &&
           kKeywords.count(raw[k].pieces[0].text)) {
      ++k;
    }
    if (k < raw.size() && raw[k].pieces.size() == 1 && !raw[k].pieces[0].quoted &&
        (raw[k].pieces[0].text == "for" || raw[k].pieces[0].text == "case" ||
         raw[k].pieces[0].text == "function")) {
      continue;
    }
    bool declaration = false;
    if (k < raw.size() && raw[k].pieces.size() == 1 && !raw[k].pieces[0].quoted) {
      const std::string& w = raw[k].pieces[0].text;
      if (w == "export" || w == "local" || w == "declare" || w == "readonly" || w == "typeset") {
        declaration = true;
        ++k;
        while (k < raw.size() && raw[k].pieces.size() == 1 &&
               StartsWith(raw[k].pieces[0].text, "-"))
          ++k;
      }
    }
    ShellCommand cmd;
    cmd.line = line;
    cmd.file = file;
    cmd.function = function;
    // Leading assignments.
    while (k < raw.size()) {
      // The name part must be an unquoted first piece containing '='.
      if (raw[k].pieces.empty() || raw[k].pieces[0].quoted) break;
      std::string name, first_value;
      bool append = false;
      if (!IsAssignment(raw[k].pieces[0].text, &name, &first_value, &append)) break;
      // Value: rest of first piece + remaining pieces, expanded without splitting.
      std::string value;
      bool unknown = false;
      value += ex.Expand(first_value, unknown);
      for (size_t p = 1; p < raw[k].pieces.size(); ++p) {
        const Piece& pc = raw[k].pieces[p];
        value += pc.single ? pc.text : ex.Expand(pc.text, unknown);
      }
      if (append) {  // NAME+=value
        auto cur = cmd.env.find(name);
        value = (cur != cmd.env.end() ? cur->second
                 : vars.count(name)   ? vars.at(name)
                                      : std::string()) +
                value;
      }
      cmd.env[name] = value;
      ++k;
    }
    if (k >= raw.size()) {
      // Pure assignment statement: set shell variables.
      for (const auto& [n, v] : cmd.env) {
        vars[n] = v;
        script.variables[n] = v;
        script.variable_lines[n] = line;
      }
      continue;
    }
    if (declaration) {
      // `export A B=1`: names without values.
      for (; k < raw.size(); ++k) {
        std::string name, value;
        if (!raw[k].pieces.empty() && IsAssignment(raw[k].pieces[0].text, &name, &value)) {
          bool u = false;
          vars[name] = ex.Expand(value, u);
          script.variables[name] = vars[name];
          script.variable_lines[name] = line;
        }
      }
      for (const auto& [n, v] : cmd.env) {
        vars[n] = v;
        script.variables[n] = v;
        script.variable_lines[n] = line;
      }
      continue;
    }
    for (; k < raw.size(); ++k) {
      for (ShellWord& w : ex.ExpandWord(raw[k])) cmd.words.push_back(std::move(w));
    }
    if (!cmd.words.empty() && cmd.words[0].text == "shift" && !cmd.words[0].unknown) {
      // `shift [N]`: drops the first N positional parameters ($@ and $1.. follow).
      size_t n = 1;
      if (cmd.words.size() > 1) {
        auto v = ParseInt(cmd.words[1].text);
        n = v && *v >= 0 ? static_cast<size_t>(*v) : 1;
      }
      positional.erase(
          positional.begin(),
          positional.begin() + static_cast<std::ptrdiff_t>(std::min(n, positional.size())));
      continue;
    }
    if (cmd.words.empty() || Expand(cmd, depth, positional)) continue;
    script.commands.push_back(std::move(cmd));
  }
}

}  // namespace

ShellScript ParseShell(std::string_view text, const ShellContext& context) {
  ShellScript script;
  // #SBATCH directives: only comment lines starting with "#SBATCH".
  {
    int line = 0;
    for (std::string_view raw : Split(text, '\n')) {
      ++line;
      std::string_view l = Trim(raw);
      if (!StartsWith(l, "#SBATCH")) continue;
      std::string_view rest = l.substr(7);
      if (!rest.empty() && !std::isspace(static_cast<unsigned char>(rest[0]))) continue;
      size_t hash = rest.find(" #");
      if (hash != std::string_view::npos) rest = rest.substr(0, hash);
      std::vector<std::string> words;
      for (std::string_view w : Split(rest, ' ')) {
        w = Trim(w);
        if (!w.empty()) words.emplace_back(w);
      }
      for (auto& d : ParseSbatchOptions(words, line)) script.sbatch.push_back(std::move(d));
    }
  }
  ShellReader reader(context, script);
  reader.RunScript(text);
  return script;
}

}  // namespace schedmate::advisor
