#include "advisor/python_lexer.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "core/strings.h"

namespace schedmate::advisor {
namespace {

using Tk = PyTokenKind;

bool IsIdStart(unsigned char c) { return std::isalpha(c) || c == '_' || c >= 0x80; }
bool IsIdChar(unsigned char c) { return std::isalnum(c) || c == '_' || c >= 0x80; }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

std::string DecodeEscapes(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 >= s.size()) {
      out.push_back(s[i]);
      continue;
    }
    char n = s[++i];
    switch (n) {
      case 'n':
        out.push_back('\n');
        break;
      case 't':
        out.push_back('\t');
        break;
      case '\\':
        out.push_back('\\');
        break;
      case '\'':
        out.push_back('\'');
        break;
      case '"':
        out.push_back('"');
        break;
      case '\n':
        break;
      default:
        out.push_back('\\');
        out.push_back(n);
        break;
    }
  }
  return out;
}

// One pass over the source; each Lex* method reads one token at `i_` when it starts there.
class Lexer {
 public:
  Lexer(std::string_view src, std::vector<std::pair<std::string, int>>& comments)
      : src_(src), comments_(comments) {}

  std::vector<PyLogicalLine> Run() {
    while (i_ < src_.size()) {
      if (SkipLayout()) continue;
      const int col = static_cast<int>(i_ - line_start_);
      if (at_line_start_) {
        cur_.indent = col;
        cur_.line = line_;
        at_line_start_ = false;
      }
      if (LexString(col) || LexName(col) || LexNumber(col)) continue;
      LexOperator(col);
    }
    Flush();
    return std::move(lines_);
  }

 private:
  void Flush() {
    if (!cur_.tokens.empty()) lines_.push_back(std::move(cur_));
    cur_ = PyLogicalLine();
  }

  // Newlines (ending the logical line outside brackets), blanks, backslash continuations and
  // comments; true when one was consumed.
  bool SkipLayout() {
    const char c = src_[i_];
    if (c == '\n') {
      ++line_;
      ++i_;
      line_start_ = i_;
      if (depth_ == 0) {
        Flush();
        at_line_start_ = true;
      }
      return true;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
      ++i_;
      return true;
    }
    if (c == '\\' && i_ + 1 < src_.size() && (src_[i_ + 1] == '\n' || src_[i_ + 1] == '\r')) {
      i_ += (src_[i_ + 1] == '\r' && i_ + 2 < src_.size() && src_[i_ + 2] == '\n') ? 3 : 2;
      ++line_;
      line_start_ = i_;
      return true;
    }
    if (c == '#') {
      size_t e = src_.find('\n', i_);
      if (e == std::string_view::npos) e = src_.size();
      comments_.emplace_back(std::string(Trim(src_.substr(i_ + 1, e - i_ - 1))), line_);
      i_ = e;
      return true;
    }
    return false;
  }

  // A string literal with up to three prefix letters; the prefix letters count as a prefix only
  // when a quote follows them directly.
  bool LexString(int col) {
    size_t p = i_;
    bool raw = false, fstr = false;
    while (p < src_.size() && p - i_ < 3 && std::strchr("rRbBuUfF", src_[p]) != nullptr) {
      char q = static_cast<char>(std::tolower(static_cast<unsigned char>(src_[p])));
      raw |= q == 'r';
      fstr |= q == 'f';
      ++p;
    }
    if (p >= src_.size() || (src_[p] != '\'' && src_[p] != '"')) return false;
    const char q = src_[p];
    const bool triple = p + 2 < src_.size() && src_[p + 1] == q && src_[p + 2] == q;
    const size_t start = p + (triple ? 3 : 1);
    const int start_line = line_;
    const size_t j = StringBodyEnd(start, q, triple, raw);
    std::string_view body = src_.substr(start, std::min(j, src_.size()) - start);
    PyToken t{
        Tk::kString, raw ? std::string(body) : DecodeEscapes(body), start_line, col, fstr, i_, 0};
    t.end = j < src_.size() ? j + (triple ? 3 : (src_[j] == q ? 1 : 0)) : src_.size();
    i_ = t.end;
    cur_.tokens.push_back(std::move(t));
    return true;
  }

  // Where the body of a string opened just before `start` ends: at its closing quote(s), at the
  // line's end for an unterminated single-quoted string, or at (or past) the end of the source.
  // Counts the newlines inside.
  size_t StringBodyEnd(size_t start, char q, bool triple, bool raw) {
    size_t j = start;
    while (j < src_.size()) {
      if (src_[j] == '\\' && !raw) {
        if (j + 1 < src_.size() && src_[j + 1] == '\n') ++line_;
        j += 2;
        continue;
      }
      if (src_[j] == '\\' && raw) {
        j += 2;
        continue;
      }
      if (src_[j] == '\n') {
        if (!triple) break;  // unterminated single-quoted string: stop at end of line
        ++line_;
      }
      if (src_[j] == q &&
          (!triple || (j + 2 < src_.size() && src_[j + 1] == q && src_[j + 2] == q))) {
        break;
      }
      ++j;
    }
    return j;
  }

  bool LexName(int col) {
    if (!IsIdStart(static_cast<unsigned char>(src_[i_]))) return false;
    size_t j = i_;
    while (j < src_.size() && IsIdChar(static_cast<unsigned char>(src_[j]))) ++j;
    Push(Tk::kName, j, col);
    return true;
  }

  // 0x1F, 0o17, 0b1, 1_000, 3.5, .5, 1e-3, 2j.
  bool LexNumber(int col) {
    const char c = src_[i_];
    if (!IsDigit(c) && !(c == '.' && i_ + 1 < src_.size() && IsDigit(src_[i_ + 1]))) return false;
    size_t j = i_;
    if (c == '0' && j + 1 < src_.size() && std::strchr("xXoObB", src_[j + 1]) != nullptr) {
      j += 2;
      while (j < src_.size() &&
             (std::isxdigit(static_cast<unsigned char>(src_[j])) || src_[j] == '_'))
        ++j;
    } else {
      while (j < src_.size() && (IsDigit(src_[j]) || src_[j] == '_' || src_[j] == '.')) ++j;
      if (j < src_.size() && (src_[j] == 'e' || src_[j] == 'E')) {
        size_t k = j + 1;
        if (k < src_.size() && (src_[k] == '+' || src_[k] == '-')) ++k;
        if (k < src_.size() && IsDigit(src_[k])) {
          j = k;
          while (j < src_.size() && IsDigit(src_[j])) ++j;
        }
      }
      if (j < src_.size() && (src_[j] == 'j' || src_[j] == 'J')) ++j;
    }
    Push(Tk::kNumber, j, col);
    return true;
  }

  // The longest operator at i_ (any other single character is an operator of its own); brackets
  // move the nesting depth.
  void LexOperator(int col) {
    static const char* kOps3[] = {"//=", "**=", ">>=", "<<=", "..."};
    static const char* kOps2[] = {"//", "**", "==", "!=", "<=", ">=", "+=", "-=", "*=",
                                  "/=", "%=", "&=", "|=", "^=", "->", ":=", "<<", ">>"};
    std::string op;
    for (const char* o : kOps3) {
      if (src_.substr(i_, 3) == o) op = o;
    }
    if (op.empty()) {
      for (const char* o : kOps2) {
        if (src_.substr(i_, 2) == o) op = o;
      }
    }
    if (op.empty()) op = std::string(1, src_[i_]);
    if (op == "(" || op == "[" || op == "{") ++depth_;
    if ((op == ")" || op == "]" || op == "}") && depth_ > 0) --depth_;
    Push(Tk::kOp, i_ + op.size(), col);
  }

  // Adds the token src_[i_, end) and moves past it.
  void Push(Tk kind, size_t end, int col) {
    cur_.tokens.push_back(
        {kind, std::string(src_.substr(i_, end - i_)), line_, col, false, i_, end});
    i_ = end;
  }

  std::string_view src_;
  std::vector<std::pair<std::string, int>>& comments_;
  std::vector<PyLogicalLine> lines_;
  PyLogicalLine cur_;
  int depth_ = 0;  // open brackets
  int line_ = 1;
  size_t i_ = 0;
  size_t line_start_ = 0;
  bool at_line_start_ = true;
};

}  // namespace

std::vector<PyLogicalLine> LexPython(std::string_view source,
                                     std::vector<std::pair<std::string, int>>& comments) {
  return Lexer(source, comments).Run();
}

}  // namespace schedmate::advisor
