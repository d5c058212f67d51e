#pragma once
// File helpers that turn filesystem exceptions into Status naming the path.

#include <string>

#include "core/result.h"

namespace schedmate {

// Whole file into memory. kNotFound if missing; kInvalidArgument if a directory;
// kResourceExhausted if larger than `max_bytes`.
Result<std::string> ReadFileToString(const std::string& path, size_t max_bytes = size_t{1} << 32);
// Writes a regular file atomically (temp file + rename). An existing device or FIFO (/dev/null,
// /dev/stdout) is written into directly, never replaced.
Status WriteStringToFile(const std::string& path, std::string_view data);

}  // namespace schedmate
