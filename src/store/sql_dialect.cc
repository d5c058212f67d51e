#include "store/sql_dialect.h"

#include <fmt/format.h>

#include <cctype>
#include <vector>

namespace schedmate::store {
namespace {

struct Token {
  enum Kind { kWord, kSpace, kOther } kind;
  std::string text;
};

bool WordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Splits into words, whitespace and everything else; literals, quoted identifiers and comments
// are kept whole as kOther, parameters are rewritten on the way.
Result<std::vector<Token>> Tokenize(std::string_view sql, int& params) {
  std::vector<Token> out;
  size_t i = 0;
  auto quoted = [&](char close) {
    size_t j = i + 1;
    while (j < sql.size()) {
      if (sql[j] == close) {
        if (j + 1 < sql.size() && sql[j + 1] == close) {
          j += 2;  // doubled quote
          continue;
        }
        return j + 1;
      }
      ++j;
    }
    return std::string_view::npos;
  };
  while (i < sql.size()) {
    char c = sql[i];
    size_t end = i + 1;
    Token::Kind kind = Token::kOther;
    std::string text;
    if (c == '\'' || c == '"') {
      end = quoted(c);
      if (end == std::string_view::npos) {
        return Status::InvalidArgument(fmt::format("sql: unterminated {} at offset {}",
                                                   c == '"' ? "identifier" : "string", i));
      }
    } else if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      end = sql.find('\n', i);
      if (end == std::string_view::npos) end = sql.size();
    } else if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      end = sql.find("*/", i + 2);
      end = end == std::string_view::npos ? sql.size() : end + 2;
    } else if (c == '?') {
      while (end < sql.size() && std::isdigit(static_cast<unsigned char>(sql[end]))) ++end;
      int n = end > i + 1 ? std::stoi(std::string(sql.substr(i + 1, end - i - 1))) : params + 1;
      params = std::max(params, n);
      text = "$" + std::to_string(n);
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      while (end < sql.size() && std::isspace(static_cast<unsigned char>(sql[end]))) ++end;
      kind = Token::kSpace;
    } else if (WordChar(c)) {
      while (end < sql.size() && WordChar(sql[end])) ++end;
      kind = Token::kWord;
    }
    if (text.empty()) text = std::string(sql.substr(i, end - i));
    out.push_back({kind, std::move(text)});
    i = end;
  }
  return out;
}

// The upper-cased words from token `i` on (whitespace skipped), at most `n`.
std::vector<std::string> WordsFrom(const std::vector<Token>& t, size_t i, size_t n, size_t& last) {
  std::vector<std::string> words;
  for (size_t j = i; j < t.size() && words.size() < n; ++j) {
    if (t[j].kind == Token::kSpace) continue;
    if (t[j].kind != Token::kWord) break;
    words.push_back(Upper(t[j].text));
    last = j;
  }
  return words;
}

}  // namespace

Result<PostgresSql> TranslateToPostgres(std::string_view sqlite_sql) {
  PostgresSql out;
  SM_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(sqlite_sql, out.params));
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].kind != Token::kWord) {
      out.text += tokens[i].text;
      continue;
    }
    size_t last = i;
    std::vector<std::string> w = WordsFrom(tokens, i, 4, last);
    auto starts = [&](std::initializer_list<const char*> seq) {
      if (w.size() < seq.size()) return false;
      size_t k = 0;
      for (const char* s : seq)
        if (w[k++] != s) return false;
      return true;
    };
    auto skip_to = [&](size_t words) {  // consume `words` words (and the spaces between)
      size_t seen = 0;
      while (i < tokens.size()) {
        if (tokens[i].kind == Token::kWord && ++seen == words) return;
        ++i;
      }
    };
    if (starts({"INSERT", "OR"}) && w.size() >= 3 && (w[2] == "REPLACE" || w[2] == "IGNORE")) {
      return Status::InvalidArgument(fmt::format(
          "sql: INSERT OR {} is SQLite only; use INSERT ... ON CONFLICT (store::UpsertSql)", w[2]));
    }
    if (starts({"INTEGER", "PRIMARY", "KEY", "AUTOINCREMENT"})) {
      out.text += "BIGSERIAL PRIMARY KEY";
      skip_to(4);
    } else if (starts({"INTEGER", "PRIMARY", "KEY"})) {
      out.text += "BIGSERIAL PRIMARY KEY";
      skip_to(3);
    } else if (starts({"WITHOUT", "ROWID"})) {
      skip_to(2);
    } else if (starts({"BEGIN", "IMMEDIATE"})) {
      out.text += "BEGIN";
      skip_to(2);
    } else if (w[0] == "INTEGER") {
      out.text += "BIGINT";
    } else if (w[0] == "REAL") {
      out.text += "DOUBLE PRECISION";
    } else if (w[0] == "BLOB") {
      out.text += "BYTEA";
    } else {
      out.text += tokens[i].text;
    }
  }
  return out;
}

}  // namespace schedmate::store
