#include "advisor/python_scanner.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <set>

#include "advisor/python_lexer.h"
#include "core/strings.h"

namespace schedmate::advisor {
namespace {

using nlohmann::json;

using Tk = PyTokenKind;
using Token = PyToken;
using LogicalLine = PyLogicalLine;

// From token `i`, the first token at the starting bracket depth that is one of `stops`, or the
// bracket that closes the one `i` is inside (brackets opened on the way are skipped whole);
// t.size() when there is none.
size_t SkipBalanced(const std::vector<Token>& t, size_t i,
                    std::initializer_list<std::string_view> stops) {
  int depth = 0;
  for (; i < t.size(); ++i) {
    const Token& k = t[i];
    if (k.kind != Tk::kOp) continue;
    if (k.text == "(" || k.text == "[" || k.text == "{") {
      ++depth;
    } else if (k.text == ")" || k.text == "]" || k.text == "}") {
      if (depth == 0) return i;
      --depth;
    } else if (depth == 0 && std::find(stops.begin(), stops.end(), k.text) != stops.end()) {
      return i;
    }
  }
  return i;
}

// Recursive-descent expression parser over one logical line.
class Parser {
 public:
  Parser(const std::vector<Token>& t, std::string_view src, PyFacts& facts,
         std::set<size_t>& seen_calls, const std::map<std::string, json>* env)
      : t_(t), src_(src), facts_(facts), seen_(seen_calls), env_(env) {}

  size_t pos = 0;
  bool failed = false;

  const Token& Peek(size_t k = 0) const {
    static const Token kEnd{Tk::kEnd, "", 0, 0, false, 0, 0};
    return pos + k < t_.size() ? t_[pos + k] : kEnd;
  }
  bool IsOp(std::string_view op, size_t k = 0) const {
    return Peek(k).kind == Tk::kOp && Peek(k).text == op;
  }
  bool IsName(std::string_view n, size_t k = 0) const {
    return Peek(k).kind == Tk::kName && Peek(k).text == n;
  }
  // Advances to the bracket that closes the one we are inside (not past it), skipping nested
  // brackets: the rest of a comprehension, a generator argument or a subscript.
  void SkipToClosingBracket() { pos = SkipBalanced(t_, pos, {}); }
  std::string TextFrom(size_t start_tok) const {
    if (start_tok >= t_.size()) return {};
    size_t b = t_[start_tok].begin;
    size_t e = pos > 0 && pos - 1 < t_.size() ? t_[pos - 1].end : b;
    if (e <= b || e > src_.size()) return t_[start_tok].text;
    return std::string(src_.substr(b, e - b));
  }

  PyValue Expr() {
    size_t start = pos;
    PyValue v = Lambda();
    v.text = TextFrom(start);
    return v;
  }

 private:
  PyValue Lambda() {
    if (IsName("lambda")) {
      while (Peek().kind != Tk::kEnd && !IsOp(",") && !IsOp(")") && !IsOp("]") && !IsOp("}")) ++pos;
      return {};
    }
    PyValue v = OrTest();
    if (IsName("if")) {
      ++pos;
      OrTest();
      if (IsName("else")) {
        ++pos;
        Lambda();
      }
      v.literal.reset();  // conditional: dynamic
    }
    return v;
  }
  // `a or b or ...` / `a and b and ...`: the first operand's value, dynamic when there are more.
  PyValue BooleanChain(std::string_view op, PyValue (Parser::*operand)()) {
    PyValue v = (this->*operand)();
    while (IsName(op)) {
      ++pos;
      (this->*operand)();
      v.literal.reset();
    }
    return v;
  }
  PyValue OrTest() { return BooleanChain("or", &Parser::AndTest); }
  PyValue AndTest() { return BooleanChain("and", &Parser::NotTest); }
  PyValue NotTest() {
    if (IsName("not")) {
      ++pos;
      PyValue v = NotTest();
      if (v.literal && v.literal->is_boolean()) return {json(!v.literal->get<bool>()), ""};
      return {};
    }
    PyValue v = Arith();
    static const std::set<std::string> kCmp = {"==", "!=", "<", ">", "<=", ">="};
    while ((Peek().kind == Tk::kOp && kCmp.count(Peek().text)) || IsName("in") || IsName("is") ||
           (IsName("not") && IsName("in", 1))) {
      if (IsName("not")) ++pos;
      ++pos;
      if (IsName("not")) ++pos;
      Arith();
      v.literal.reset();
    }
    return v;
  }
  static std::optional<json> Binary(const json& a, const std::string& op, const json& b) {
    if (a.is_number() && b.is_number()) {
      bool ints = a.is_number_integer() && b.is_number_integer();
      double x = a.get<double>(), y = b.get<double>();
      if (op == "+") return ints ? json(a.get<int64_t>() + b.get<int64_t>()) : json(x + y);
      if (op == "-") return ints ? json(a.get<int64_t>() - b.get<int64_t>()) : json(x - y);
      if (op == "*") return ints ? json(a.get<int64_t>() * b.get<int64_t>()) : json(x * y);
      if (op == "/") return y != 0 ? std::optional<json>(json(x / y)) : std::nullopt;
      if (op == "//") {
        if (y == 0) return std::nullopt;
        return ints ? json(static_cast<int64_t>(std::floor(x / y))) : json(std::floor(x / y));
      }
      if (op == "%" && ints && b.get<int64_t>() != 0)
        return json(a.get<int64_t>() % b.get<int64_t>());
      if (op == "**") {
        double r = std::pow(x, y);
        if (ints && y >= 0 && r < 9e18) return json(static_cast<int64_t>(r));
        return json(r);
      }
      return std::nullopt;
    }
    if (op == "+" && a.is_string() && b.is_string())
      return json(a.get<std::string>() + b.get<std::string>());
    if (op == "+" && a.is_array() && b.is_array()) {
      json r = a;
      for (const auto& x : b) r.push_back(x);
      return r;
    }
    return std::nullopt;
  }
  PyValue Arith() {
    PyValue v = Term();
    while (IsOp("+") || IsOp("-") || IsOp("|") || IsOp("&") || IsOp("^") || IsOp("<<") ||
           IsOp(">>")) {
      std::string op = Peek().text;
      ++pos;
      PyValue r = Term();
      if (v.literal && r.literal && (op == "+" || op == "-")) {
        v.literal = Binary(*v.literal, op, *r.literal);
      } else {
        v.literal.reset();
      }
    }
    return v;
  }
  PyValue Term() {
    PyValue v = Factor();
    while (IsOp("*") || IsOp("/") || IsOp("//") || IsOp("%") || IsOp("@")) {
      std::string op = Peek().text;
      ++pos;
      PyValue r = Factor();
      if (v.literal && r.literal) {
        v.literal = Binary(*v.literal, op, *r.literal);
      } else {
        v.literal.reset();
      }
    }
    return v;
  }
  PyValue Factor() {
    if (IsOp("-") || IsOp("+") || IsOp("~")) {
      std::string op = Peek().text;
      ++pos;
      PyValue v = Factor();
      if (v.literal && v.literal->is_number() && op == "-") {
        if (v.literal->is_number_integer()) {
          v.literal = json(-v.literal->get<int64_t>());
        } else {
          v.literal = json(-v.literal->get<double>());
        }
      } else if (op == "~") {
        v.literal.reset();
      }
      return v;
    }
    PyValue v = Power();
    return v;
  }
  PyValue Power() {
    PyValue v = Primary();
    if (IsOp("**")) {
      ++pos;
      PyValue r = Factor();
      if (v.literal && r.literal) {
        v.literal = Binary(*v.literal, "**", *r.literal);
      } else {
        v.literal.reset();
      }
    }
    return v;
  }

  // Arguments of a call whose '(' is at pos. Records the call.
  void CallArgs(const std::string& callee, json* dict_result, bool* all_literal) {
    size_t paren = pos;
    int line = Peek().line;
    ++pos;  // (
    PyCall call;
    call.callee = callee;
    call.line = line;
    bool literal = true;
    json obj = json::object();
    while (!failed && Peek().kind != Tk::kEnd && !IsOp(")")) {
      if (IsOp("*") || IsOp("**")) {
        ++pos;
        Expr();
        literal = false;
      } else if (Peek().kind == Tk::kName && IsOp("=", 1)) {
        std::string key = Peek().text;
        pos += 2;
        PyValue v = Expr();
        if (v.literal && obj.is_object()) {
          obj[key] = *v.literal;
        } else {
          literal = false;
        }
        call.kwargs.emplace_back(key, std::move(v));
      } else {
        PyValue v = Expr();
        // Generator expression inside a call: skip to the closing paren.
        if (IsName("for")) {
          SkipToClosingBracket();
          literal = false;
        }
        call.args.push_back(std::move(v));
        literal = false;  // positional args: not a dict(...) literal
        obj = json();     // dict(mapping) is not a keyword literal
      }
      if (IsOp(",")) {
        ++pos;
      } else if (!IsOp(")")) {
        failed = true;
      }
    }
    if (IsOp(")")) ++pos;
    if (seen_.insert(t_[paren].begin).second) facts_.calls.push_back(std::move(call));
    if (dict_result != nullptr) *dict_result = obj;
    if (all_literal != nullptr) *all_literal = literal;
  }

  PyValue Primary() {
    size_t start = pos;
    PyValue v = Atom();
    std::string name = start < t_.size() && t_[start].kind == Tk::kName ? t_[start].text : "";
    bool dotted_ok = !name.empty();
    while (!failed) {
      if (IsOp(".") && Peek(1).kind == Tk::kName) {
        name += "." + Peek(1).text;
        pos += 2;
        v.literal.reset();
        if (!dotted_ok) name = "()" + name;
        continue;
      }
      if (IsOp("(")) {
        json obj;
        bool all_literal = false;
        std::string callee = name.empty() ? "()" : name;
        CallArgs(callee, &obj, &all_literal);
        // dict(...) keeps its literal keyword arguments even when others are dynamic
        // (configs often splice non-literal pipelines into otherwise literal dicts).
        if (callee == "dict" && obj.is_object()) {
          v.literal = obj;
        } else {
          v.literal.reset();
        }
        name = callee + "()";
        dotted_ok = false;
        continue;
      }
      if (IsOp("[")) {
        ++pos;
        SkipToClosingBracket();
        if (IsOp("]")) ++pos;
        v.literal.reset();
        name += "[]";
        dotted_ok = false;
        continue;
      }
      break;
    }
    return v;
  }

  PyValue Sequence(const std::string& close, bool is_dict_brace) {
    // pos is after the opening bracket.
    json arr = json::array();
    json obj = json::object();
    bool literal = true;
    bool is_dict = false;
    while (!failed && Peek().kind != Tk::kEnd && !IsOp(close)) {
      if (IsOp("*") || IsOp("**")) {
        ++pos;
        Expr();
        literal = false;
      } else {
        PyValue k = Expr();
        if (is_dict_brace && IsOp(":")) {
          ++pos;
          is_dict = true;
          PyValue val = Expr();
          if (k.literal && k.literal->is_string() && val.literal) {
            obj[k.literal->get<std::string>()] = *val.literal;
          } else {
            literal = false;
          }
        } else {
          if (k.literal) {
            arr.push_back(*k.literal);
          } else {
            literal = false;
          }
        }
        if (IsName("for")) {  // comprehension
          literal = false;
          SkipToClosingBracket();
        }
      }
      if (IsOp(",")) {
        ++pos;
      } else if (!IsOp(close)) {
        failed = true;
      }
    }
    if (IsOp(close)) ++pos;
    PyValue v;
    if (is_dict) {
      v.literal = obj;  // literal entries only
    } else if (literal) {
      v.literal = arr;
    }
    return v;
  }

  PyValue Atom() {
    const Token& tk = Peek();
    PyValue v;
    switch (tk.kind) {
      case Tk::kNumber: {
        std::string s;
        for (char c : tk.text) {
          if (c != '_') s.push_back(c);
        }
        ++pos;
        if (auto i = ParseInt(s)) {
          v.literal = json(*i);
        } else if (StartsWith(s, "0x") || StartsWith(s, "0X")) {
          v.literal = json(static_cast<int64_t>(std::stoll(s.substr(2), nullptr, 16)));
        } else if (auto d = ParseDouble(s)) {
          v.literal = json(*d);
        }
        return v;
      }
      case Tk::kString: {
        std::string s;
        bool f = false;
        while (Peek().kind == Tk::kString) {
          s += Peek().text;
          f |= Peek().fstring;
          ++pos;
        }
        if (!f || s.find('{') == std::string::npos) v.literal = json(s);
        return v;
      }
      case Tk::kName: {
        ++pos;
        if (tk.text == "True")
          v.literal = json(true);
        else if (tk.text == "False")
          v.literal = json(false);
        else if (tk.text == "None")
          v.literal = json(nullptr);
        else if (env_ != nullptr) {
          auto it = env_->find(tk.text);
          if (it != env_->end()) v.literal = it->second;
        }
        return v;
      }
      case Tk::kOp: {
        if (tk.text == "(") {
          ++pos;
          if (IsOp(")")) {
            ++pos;
            v.literal = json::array();
            return v;
          }
          PyValue inner = Expr();
          if (IsOp(",")) {  // tuple
            json arr = json::array();
            bool lit = inner.literal.has_value();
            if (lit) arr.push_back(*inner.literal);
            while (IsOp(",")) {
              ++pos;
              if (IsOp(")")) break;
              PyValue e = Expr();
              if (e.literal) {
                arr.push_back(*e.literal);
              } else {
                lit = false;
              }
            }
            if (lit) v.literal = arr;
          } else {
            v.literal = inner.literal;
          }
          if (IsName("for")) {
            v.literal.reset();
            SkipToClosingBracket();
          }
          if (IsOp(")")) {
            ++pos;
          } else {
            failed = true;
          }
          return v;
        }
        if (tk.text == "[") {
          ++pos;
          return Sequence("]", false);
        }
        if (tk.text == "{") {
          ++pos;
          return Sequence("}", true);
        }
        if (tk.text == "...") {
          ++pos;
          return v;
        }
        failed = true;
        ++pos;
        return v;
      }
      case Tk::kEnd:
        failed = true;
        return v;
    }
    return v;
  }

  const std::vector<Token>& t_;
  std::string_view src_;
  PyFacts& facts_;
  std::set<size_t>& seen_;
  const std::map<std::string, json>* env_;
};

std::string DottedTarget(const std::vector<Token>& t, size_t b, size_t e) {
  std::string s;
  for (size_t i = b; i < e; ++i) {
    if (t[i].kind == Tk::kName) {
      s += t[i].text;
    } else if (t[i].kind == Tk::kOp && t[i].text == ".") {
      s += ".";
    } else if (t[i].kind == Tk::kOp && t[i].text == "[" && i + 2 < e &&
               t[i + 1].kind == Tk::kString && t[i + 2].text == "]") {
      s += "." + t[i + 1].text;
      i += 2;
    } else {
      return {};
    }
  }
  return s;
}

}  // namespace

const PyValue* PyCall::Kwarg(std::string_view name) const {
  for (const auto& [k, v] : kwargs) {
    if (k == name) return &v;
  }
  return nullptr;
}

// `def NAME(p1, p2: T = default, *args, p3=..., **kw):` from token `at` (the name).
void ReadFunction(const std::vector<Token>& t, size_t at, const LogicalLine& ll,
                  std::string_view source, PyFacts& facts, std::set<size_t>& seen_calls) {
  if (at + 1 >= t.size() || t[at].kind != Tk::kName ||
      !(t[at + 1].kind == Tk::kOp && t[at + 1].text == "("))
    return;
  PyFunction fn;
  fn.name = t[at].text;
  fn.line = ll.line;
  fn.indent = ll.indent;
  size_t i = at + 2;
  while (i < t.size() && !(t[i].kind == Tk::kOp && t[i].text == ")")) {
    // One parameter: [*|**] NAME [: annotation] [= default]
    bool star = false;
    while (i < t.size() && t[i].kind == Tk::kOp &&
           (t[i].text == "*" || t[i].text == "**" || t[i].text == "/")) {
      star = true;
      ++i;
    }
    PyParam prm;
    if (i < t.size() && t[i].kind == Tk::kName) {
      prm.name = t[i].text;
      prm.line = t[i].line;
      ++i;
    }
    // Skip an annotation up to '=' or ',' at this depth.
    i = SkipBalanced(t, i, {"=", ","});
    if (i < t.size() && t[i].kind == Tk::kOp && t[i].text == "=") {
      Parser p(t, source, facts, seen_calls, nullptr);
      p.pos = i + 1;
      const size_t calls_before = facts.calls.size();
      PyValue v = p.Expr();
      // typer: `epochs: int = typer.Option(10, help=...)` -> 10.
      if (!v.literal && facts.calls.size() > calls_before) {
        const PyCall& c = facts.calls[calls_before];
        const std::string& callee = c.callee;
        if (callee == "Option" || callee == "Argument" || callee.ends_with(".Option") ||
            callee.ends_with(".Argument")) {
          if (const PyValue* d = c.Kwarg("default")) {
            v = *d;
          } else if (!c.args.empty()) {
            v = c.args[0];
          }
        }
      }
      prm.value = v;
      i = p.pos;
    }
    if (!prm.name.empty() && !star && prm.name != "self" && prm.name != "cls")
      fn.params.push_back(std::move(prm));
    // Past the next ',' at depth 0 (or to the closing parenthesis).
    i = SkipBalanced(t, i, {","});
    if (i < t.size() && t[i].kind == Tk::kOp && t[i].text == ",") ++i;
  }
  facts.functions.push_back(std::move(fn));
}

PyFacts ScanPython(std::string_view source) {
  PyFacts facts;
  std::vector<LogicalLine> lines = LexPython(source, facts.comments);
  std::set<size_t> seen_calls;
  std::vector<std::pair<int, std::string>> class_stack;  // indent, name
  static const std::set<std::string> kAugOps = {"+=", "-=", "*=", "/=", "//=", "%=", "**="};
  for (const LogicalLine& ll : lines) {
    const auto& t = ll.tokens;
    while (!class_stack.empty() && ll.indent <= class_stack.back().first) class_stack.pop_back();
    if (t.empty()) continue;
    const std::string& first = t[0].text;
    if (t[0].kind == Tk::kName && (first == "import" || first == "from")) {
      if (t.size() > 1) {
        std::string mod;
        for (size_t i = 1; i < t.size(); ++i) {
          if (t[i].kind == Tk::kName && (t[i].text == "import" || t[i].text == "as")) break;
          if (t[i].kind == Tk::kOp && t[i].text == ",") {
            if (!mod.empty()) facts.imports.emplace_back(mod, ll.line);
            mod.clear();
            continue;
          }
          mod += t[i].text;
        }
        if (!mod.empty()) facts.imports.emplace_back(mod, ll.line);
      }
      continue;
    }
    if (t[0].kind == Tk::kName && first == "class" && t.size() > 1) {
      class_stack.emplace_back(ll.indent, t[1].text);
      continue;
    }
    if (t[0].kind == Tk::kName &&
        (first == "def" || (first == "async" && t.size() > 1 && t[1].text == "def"))) {
      ReadFunction(t, first == "def" ? 1 : 2, ll, source, facts, seen_calls);
      continue;
    }
    // Find a top-level assignment operator.
    int depth = 0;
    size_t assign_at = t.size();
    size_t colon_at = t.size();
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i].kind != Tk::kOp) continue;
      const std::string& o = t[i].text;
      if (o == "(" || o == "[" || o == "{") ++depth;
      if (o == ")" || o == "]" || o == "}") --depth;
      if (depth != 0) continue;
      if (o == ":" && colon_at == t.size() && i > 0) colon_at = i;
      if (o == "=" || kAugOps.count(o)) {
        assign_at = i;
        break;
      }
    }
    const std::map<std::string, json>* env = ll.indent == 0 ? &facts.globals : nullptr;
    if (assign_at < t.size() && assign_at > 0) {
      std::string op = t[assign_at].text;
      bool annotated = colon_at < assign_at;
      std::string target = DottedTarget(t, 0, annotated ? colon_at : assign_at);
      Parser p(t, source, facts, seen_calls, env);
      p.pos = assign_at + 1;
      // Chained assignment a = b = 1: evaluate the last expression.
      size_t last_eq = assign_at;
      {
        int d = 0;
        for (size_t i = assign_at + 1; i < t.size(); ++i) {
          if (t[i].kind != Tk::kOp) continue;
          if (t[i].text == "(" || t[i].text == "[" || t[i].text == "{") ++d;
          if (t[i].text == ")" || t[i].text == "]" || t[i].text == "}") --d;
          if (d == 0 && t[i].text == "=") last_eq = i;
        }
      }
      p.pos = last_eq + 1;
      PyValue v = p.Expr();
      if (annotated && !class_stack.empty() && !target.empty()) {
        // field(default=X) -> X
        PyValue def = v;
        if (!facts.calls.empty() && facts.calls.back().callee == "field" &&
            facts.calls.back().line == ll.line) {
          if (const PyValue* d = facts.calls.back().Kwarg("default")) def = *d;
        }
        facts.fields.push_back({class_stack.back().second, target, def, ll.line});
      } else if (!target.empty()) {
        facts.assignments.push_back({target, op, v, ll.line, ll.indent});
        if (ll.indent == 0 && op == "=" && target.find('.') == std::string::npos) {
          if (v.literal) {
            facts.globals[target] = *v.literal;
            facts.global_lines[target] = ll.line;
          } else {
            facts.globals.erase(target);
          }
        }
      }
    }
    // Sweep for calls not reached by the statement parser (inside if/for/with/return...).
    for (size_t i = 0; i + 1 < t.size(); ++i) {
      if (!(t[i + 1].kind == Tk::kOp && t[i + 1].text == "(") || t[i].kind != Tk::kName) continue;
      if (seen_calls.count(t[i + 1].begin)) continue;
      static const std::set<std::string> kKeywords = {
          "if",     "elif", "while",  "for",   "in",  "not",   "and",    "or",
          "return", "with", "assert", "print", "def", "class", "lambda", "yield"};
      if (kKeywords.count(t[i].text) && t[i].text != "print") continue;
      // Start at the beginning of the dotted chain.
      size_t s = i;
      while (s >= 2 && t[s - 1].kind == Tk::kOp && t[s - 1].text == "." &&
             t[s - 2].kind == Tk::kName)
        s -= 2;
      if (s >= 1 && t[s - 1].kind == Tk::kOp && t[s - 1].text == ".") continue;  // after a call
      if (t[0].kind == Tk::kName && t[0].text == "def" && s == 1) continue;
      Parser p(t, source, facts, seen_calls, env);
      p.pos = s;
      (void)p.Expr();
    }
  }
  return facts;
}

std::optional<nlohmann::json> EvalPythonLiteral(std::string_view expr) {
  PyFacts scratch;
  std::vector<LogicalLine> lines = LexPython(expr, scratch.comments);
  if (lines.size() != 1) return std::nullopt;
  std::set<size_t> seen;
  Parser p(lines[0].tokens, expr, scratch, seen, nullptr);
  PyValue v = p.Expr();
  if (p.failed || p.pos != lines[0].tokens.size()) return std::nullopt;
  return v.literal;
}

}  // namespace schedmate::advisor
