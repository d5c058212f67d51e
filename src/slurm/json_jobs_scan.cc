#include "slurm/json_jobs_scan.h"

#include <charconv>
#include <cstdint>
#include <string>

namespace schedmate::slurm::internal {
namespace {

constexpr int kMaxDepth = 64;

// One pass over the text; every Read*/Skip* returns false on anything it does not accept.
class Scanner {
 public:
  explicit Scanner(std::string_view t) : t_(t) {}

  void Space() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\n' || t_[p_] == '\r' || t_[p_] == '\t'))
      ++p_;
  }
  bool At(char c) {
    Space();
    return p_ < t_.size() && t_[p_] == c;
  }
  bool Eat(char c) {
    if (!At(c)) return false;
    ++p_;
    return true;
  }
  bool End() {
    Space();
    return p_ == t_.size();
  }

  // A string; its decoded text goes to `out` when given. Escapes other than \uXXXX are decoded;
  // bytes >= 0x80 must form valid UTF-8 (RFC 3629: no overlongs, surrogates or > U+10FFFF).
  bool String(std::string* out) {
    if (!Eat('"')) return false;
    size_t run = p_;
    while (p_ < t_.size()) {
      unsigned char c = static_cast<unsigned char>(t_[p_]);
      if (c == '"') {
        if (out != nullptr) out->append(t_.data() + run, p_ - run);
        ++p_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        if (out != nullptr) out->append(t_.data() + run, p_ - run);
        if (++p_ >= t_.size()) return false;
        char e = t_[p_++];
        char d = e == '"' || e == '\\' || e == '/' ? e
                 : e == 'b'                        ? '\b'
                 : e == 'f'                        ? '\f'
                 : e == 'n'                        ? '\n'
                 : e == 'r'                        ? '\r'
                 : e == 't'                        ? '\t'
                                                   : 0;
        if (d == 0) return false;  // \u (left to nlohmann) or not an escape
        if (out != nullptr) out->push_back(d);
        run = p_;
        continue;
      }
      if (c < 0x80) {
        ++p_;
        continue;
      }
      if (!Utf8()) return false;
    }
    return false;
  }

  // A number in JSON's grammar. `integer` tells whether it had neither fraction nor exponent.
  bool Number(std::string_view& text, bool& integer) {
    Space();
    size_t b = p_;
    if (p_ < t_.size() && t_[p_] == '-') ++p_;
    if (p_ >= t_.size() || !IsDigit(t_[p_])) return false;
    if (t_[p_] == '0') {
      ++p_;
    } else {
      while (p_ < t_.size() && IsDigit(t_[p_])) ++p_;
    }
    integer = true;
    if (p_ < t_.size() && t_[p_] == '.') {
      integer = false;
      if (++p_ >= t_.size() || !IsDigit(t_[p_])) return false;
      while (p_ < t_.size() && IsDigit(t_[p_])) ++p_;
    }
    if (p_ < t_.size() && (t_[p_] == 'e' || t_[p_] == 'E')) {
      integer = false;
      ++p_;
      if (p_ < t_.size() && (t_[p_] == '+' || t_[p_] == '-')) ++p_;
      if (p_ >= t_.size() || !IsDigit(t_[p_])) return false;
      while (p_ < t_.size() && IsDigit(t_[p_])) ++p_;
    }
    text = t_.substr(b, p_ - b);
    return true;
  }

  bool Literal(std::string_view word) {
    Space();
    if (t_.substr(p_, word.size()) != word) return false;
    p_ += word.size();
    return true;
  }

  // Any value, checked and dropped.
  bool SkipValue(int depth) {
    if (depth > kMaxDepth) return false;
    Space();
    if (p_ >= t_.size()) return false;
    char c = t_[p_];
    if (c == '"') return String(nullptr);
    if (c == 't') return Literal("true");
    if (c == 'f') return Literal("false");
    if (c == 'n') return Literal("null");
    if (c == '{' || c == '[') {
      ++p_;
      char close = c == '{' ? '}' : ']';
      if (Eat(close)) return true;
      do {
        if (c == '{' && !(String(nullptr) && Eat(':'))) return false;
        if (!SkipValue(depth + 1)) return false;
      } while (Eat(','));
      return Eat(close);
    }
    std::string_view num;
    bool integer = false;
    return Number(num, integer);
  }

  // A value of a kept key: scalars decoded into `out`; a container is checked, dropped and
  // reported through `nested`. False also for what only nlohmann decodes (see the header).
  bool KeptValue(nlohmann::json& out, bool& nested) {
    Space();
    nested = false;
    if (p_ >= t_.size()) return false;
    char c = t_[p_];
    if (c == '{' || c == '[') {
      nested = true;
      return SkipValue(3);
    }
    if (c == '"') {
      std::string s;
      if (!String(&s)) return false;
      out = std::move(s);
      return true;
    }
    if (c == 't' || c == 'f' || c == 'n') {
      if (Literal("true")) return out = true, true;
      if (Literal("false")) return out = false, true;
      if (Literal("null")) return out = nullptr, true;
      return false;
    }
    std::string_view num;
    bool integer = false;
    if (!Number(num, integer) || !integer) return false;
    int64_t v = 0;
    auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
    if (ec != std::errc() || end != num.data() + num.size()) return false;
    // nlohmann stores non-negative integers as unsigned; the readers accept both.
    if (v >= 0) {
      out = static_cast<uint64_t>(v);
    } else {
      out = v;
    }
    return true;
  }

 private:
  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }
  bool Cont(size_t i, unsigned char lo = 0x80, unsigned char hi = 0xBF) const {
    if (i >= t_.size()) return false;
    unsigned char c = static_cast<unsigned char>(t_[i]);
    return c >= lo && c <= hi;
  }
  // One UTF-8 sequence at p_ (first byte >= 0x80), the table of RFC 3629 section 4.
  bool Utf8() {
    unsigned char c = static_cast<unsigned char>(t_[p_]);
    size_t n = 0;
    bool ok = false;
    if (c >= 0xC2 && c <= 0xDF) {
      ok = Cont(p_ + 1), n = 2;
    } else if (c == 0xE0) {
      ok = Cont(p_ + 1, 0xA0) && Cont(p_ + 2), n = 3;
    } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
      ok = Cont(p_ + 1) && Cont(p_ + 2), n = 3;
    } else if (c == 0xED) {
      ok = Cont(p_ + 1, 0x80, 0x9F) && Cont(p_ + 2), n = 3;
    } else if (c == 0xF0) {
      ok = Cont(p_ + 1, 0x90) && Cont(p_ + 2) && Cont(p_ + 3), n = 4;
    } else if (c >= 0xF1 && c <= 0xF3) {
      ok = Cont(p_ + 1) && Cont(p_ + 2) && Cont(p_ + 3), n = 4;
    } else if (c == 0xF4) {
      ok = Cont(p_ + 1, 0x80, 0x8F) && Cont(p_ + 2) && Cont(p_ + 3), n = 4;
    }
    p_ += n;
    return ok;
  }

  std::string_view t_;
  size_t p_ = 0;
};

// One element of the array: an object reduced to its kept scalar keys, or skipped.
bool ScanElement(Scanner& s, const std::function<bool(std::string_view)>& keep,
                 std::vector<nlohmann::json>& out) {
  if (!s.At('{')) return s.SkipValue(2);
  s.Eat('{');
  nlohmann::json obj = nlohmann::json::object();
  if (!s.Eat('}')) {
    std::string key;
    do {
      key.clear();
      if (!s.String(&key) || !s.Eat(':')) return false;
      if (!keep(key)) {
        if (!s.SkipValue(3)) return false;
        continue;
      }
      nlohmann::json v;
      bool nested = false;
      if (!s.KeptValue(v, nested)) return false;
      if (nested) {
        obj.erase(key);
      } else {
        obj[key] = std::move(v);
      }
    } while (s.Eat(','));
    if (!s.Eat('}')) return false;
  }
  out.push_back(std::move(obj));
  return true;
}

}  // namespace

std::optional<std::vector<nlohmann::json>> ScanJsonObjects(
    std::string_view text, std::string_view array_key,
    const std::function<bool(std::string_view)>& keep) {
  Scanner s(text);
  std::optional<std::vector<nlohmann::json>> found;
  if (!s.Eat('{')) return std::nullopt;
  if (!s.Eat('}')) {
    std::string key;
    do {
      key.clear();
      if (!s.String(&key) || !s.Eat(':')) return std::nullopt;
      if (key != array_key) {
        if (!s.SkipValue(1)) return std::nullopt;
        continue;
      }
      if (!s.Eat('[')) return std::nullopt;  // not an array: nlohmann's path reports it
      std::vector<nlohmann::json> elements;
      if (!s.Eat(']')) {
        do {
          if (!ScanElement(s, keep, elements)) return std::nullopt;
        } while (s.Eat(','));
        if (!s.Eat(']')) return std::nullopt;
      }
      found = std::move(elements);  // a repeated key: the last one counts
    } while (s.Eat(','));
    if (!s.Eat('}')) return std::nullopt;
  }
  if (!s.End()) return std::nullopt;
  return found;
}

}  // namespace schedmate::slurm::internal
