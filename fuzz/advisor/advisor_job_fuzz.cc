// libFuzzer target for the built-in metadata extractor over a small job directory written from
// the input: the input is split on "\n====\n" into up to four files — run.sh (the entry), lib.sh
// (for `. lib.sh` / functions), train.py and cfg.yaml — so the shell reader (functions, sourcing,
// ${N:-"d"}, $((...)), NAME+=, shift, quoted commands), the Python scanner, the config loaders
// and the derivations all see arbitrary text that refers to each other. Nothing may crash, hang,
// throw or overflow; every extracted count is either absent or within JobMetadata::Count's range
// rules, and confidences are in [0, 1].
//
// The target works in an empty directory of its own (removed at exit); give it corpus and input
// paths that are absolute (scripts/test.sh does).

#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "advisor/builtin_extractor.h"
#include "core/check.h"
#include "core/json_dump.h"

namespace {

namespace fs = std::filesystem;
using namespace schedmate;

const fs::path& JobDir() {
  static const fs::path* dir = [] {
    char tmpl[] = "/tmp/advisor_job_fuzz.XXXXXX";
    const char* d = ::mkdtemp(tmpl);
    SM_CHECK(d != nullptr) << "mkdtemp";
    auto* p = new fs::path(d);
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(JobDir(), ec);
    });
    return p;
  }();
  return *dir;
}

void Write(const fs::path& p, std::string_view text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  static const char* kFiles[] = {"run.sh", "lib.sh", "train.py", "cfg.yaml"};
  const fs::path& dir = JobDir();
  size_t at = 0;
  for (const char* name : kFiles) {
    size_t end = in.find("\n====\n", at);
    std::string_view part = in.substr(at, end == std::string_view::npos ? in.npos : end - at);
    Write(dir / name, part);
    at = end == std::string_view::npos ? in.size() : end + 6;
  }
  advisor::BuiltinMetadataExtractor x;
  Result<advisor::JobMetadata> m =
      x.Extract({.path = (dir / "run.sh").string(), .root = dir.string()});
  if (!m.ok()) return 0;
  for (const auto& [field, c] : m->confidence) {
    SM_CHECK(c >= 0.0 && c <= 1.0) << field << " confidence " << c;
  }
  for (const char* f : {"num_gpus", "num_nodes", "per_device_batch_size", "global_batch_size",
                        "max_steps", "epochs"}) {
    if (auto n = m->Count(f, 1'000'000'000'000)) SM_CHECK(*n >= 0) << f;
  }
  (void)DumpJson(m->FieldsJson());
  (void)DumpJson(m->SourcesJson());
  (void)m->AnswerConfidence();
  return 0;
}
