#include "core/file_util.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace schedmate {

Result<std::string> ReadFileToString(const std::string& path, size_t max_bytes) {
  std::error_code ec;
  auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) return Status::NotFound(path + ": no such file");
  if (std::filesystem::is_directory(st)) return Status::InvalidArgument(path + ": is a directory");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status::NotFound(path + ": " + std::strerror(errno));
  std::string out;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    if (out.size() + n > max_bytes) {
      std::fclose(f);
      return Status::ResourceExhausted(path + ": larger than " + std::to_string(max_bytes) +
                                       " bytes");
    }
    out.append(buf, n);
  }
  bool err = std::ferror(f);
  std::fclose(f);
  if (err) return Status::DataLoss(path + ": read error");
  return out;
}

Status WriteStringToFile(const std::string& path, std::string_view data) {
  std::error_code st_ec;
  auto st = std::filesystem::status(path, st_ec);
  if (!st_ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) {
    if (std::filesystem::is_directory(st))
      return Status::InvalidArgument(path + ": is a directory");
    // A device, FIFO or socket (/dev/null, /dev/stdout, a pipe): write into it; never replace it.
    std::ofstream out(path, std::ios::binary);
    if (!out) return Status::InvalidArgument(path + ": cannot open for writing");
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out) return Status::DataLoss(path + ": write failed");
    return Status::Ok();
  }
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::InvalidArgument(path + ": cannot open for writing");
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out) return Status::DataLoss(path + ": write failed");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::DataLoss(path + ": rename failed: " + ec.message());
  return Status::Ok();
}

}  // namespace schedmate
