#include "text/tokenizer.h"

#include <cctype>

namespace schedmate::text {
namespace {

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
char Lower(char c) { return IsUpper(c) ? static_cast<char>(c - 'A' + 'a') : c; }

void Emit(std::string_view piece, const TokenizerOptions& o, std::vector<std::string>& out) {
  if (piece.size() < o.min_length) return;
  bool numeric = true;
  for (char c : piece) numeric = numeric && !IsAlpha(c);
  if (numeric && !o.keep_numbers) return;
  std::string t;
  t.reserve(piece.size());
  for (char c : piece) t.push_back(Lower(c));
  out.push_back(std::move(t));
}

// Splits one alphanumeric run (no separators inside) at case and letter/digit boundaries.
void SplitRun(std::string_view run, const TokenizerOptions& o, std::vector<std::string>& out) {
  size_t start = 0;
  size_t i = 0;
  while (i < run.size()) {
    char c = run[i];
    if (IsDigit(c)) {
      // A number: digits, an optional fraction, an optional exponent (3e-4, 1.5e+3).
      if (i > start) Emit(run.substr(start, i - start), o, out);
      start = i;
      while (i < run.size() && IsDigit(run[i])) ++i;
      if (i + 1 < run.size() && run[i] == '.' && IsDigit(run[i + 1])) {
        ++i;
        while (i < run.size() && IsDigit(run[i])) ++i;
      }
      if (i < run.size() && (run[i] == 'e' || run[i] == 'E')) {
        size_t j = i + 1;
        if (j < run.size() && (run[j] == '-' || run[j] == '+')) ++j;
        if (j < run.size() && IsDigit(run[j])) {
          i = j;
          while (i < run.size() && IsDigit(run[i])) ++i;
        }
      }
      // "7b", "13B", "70m": a single trailing unit letter stays with the number.
      if (i < run.size() && IsAlpha(run[i]) && (i + 1 == run.size() || !IsAlpha(run[i + 1]))) ++i;
      Emit(run.substr(start, i - start), o, out);
      start = i;
      continue;
    }
    if (c == '.') {  // a dot not inside a number separates
      if (i > start) Emit(run.substr(start, i - start), o, out);
      start = ++i;
      continue;
    }
    if (i > start) {
      char p = run[i - 1];
      bool boundary = (IsLower(p) && IsUpper(c)) ||
                      (IsUpper(p) && IsUpper(c) && i + 1 < run.size() && IsLower(run[i + 1]));
      if (boundary) {
        Emit(run.substr(start, i - start), o, out);
        start = i;
      }
    }
    ++i;
  }
  if (start < run.size()) Emit(run.substr(start), o, out);
}

}  // namespace

std::vector<std::string> Tokenize(std::string_view text, const TokenizerOptions& options) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    // Skip separators.
    while (i < text.size() && !IsAlpha(text[i]) && !IsDigit(text[i])) ++i;
    size_t start = i;
    while (i < text.size() &&
           (IsAlpha(text[i]) || IsDigit(text[i]) ||
            (text[i] == '.' && i + 1 < text.size() && IsDigit(text[i + 1]) && i > start &&
             IsDigit(text[i - 1])) ||
            ((text[i] == '-' || text[i] == '+') && i > start &&
             (text[i - 1] == 'e' || text[i - 1] == 'E') && i >= start + 2 && IsDigit(text[i - 2]) &&
             i + 1 < text.size() && IsDigit(text[i + 1])))) {
      ++i;
    }
    if (i > start) SplitRun(text.substr(start, i - start), options, out);
  }
  return out;
}

}  // namespace schedmate::text
