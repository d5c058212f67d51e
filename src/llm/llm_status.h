#pragma once
// Helpers for the llm layer's Status convention (chat_client.h): "<short cause>; <detail>".

#include <string>
#include <string_view>

#include "core/status.h"

namespace schedmate::llm {

// `status` with "; <detail>" appended (the short cause stays first). OK stays OK.
inline Status WithDetail(const Status& status, std::string_view detail) {
  if (status.ok() || detail.empty()) return status;
  return Status(status.code(), status.message() + "; " + std::string(detail));
}

// The short cause: the message up to the first "; ", at most 120 characters.
inline std::string ShortCause(const Status& status) {
  std::string_view m = status.message();
  m = m.substr(0, m.find("; "));
  if (m.size() > 120) return std::string(m.substr(0, 117)) + "...";
  return std::string(m);
}

}  // namespace schedmate::llm
