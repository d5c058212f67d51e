#pragma once
// The operator dashboard's files (web/ui/), compiled into the binary by src/api/embed_ui.cmake and
// served by ApiServer at GET / (index.html) and GET /ui/<name>. Read-only, no token needed, like
// every GET of the API.

#include <span>
#include <string_view>

namespace schedmate::api {

struct UiAsset {
  std::string_view name;          // file name under web/ui/, e.g. "app.js"
  std::string_view content_type;  // e.g. "text/javascript; charset=utf-8"
  std::string_view body;          // the file, verbatim
};

// Every embedded file, in the order the build listed them (generated).
std::span<const UiAsset> EmbeddedUiAssets();

// The asset called `name`, or nullptr. Names are plain file names: anything with a '/' or
// starting with '.' is never found.
const UiAsset* FindUiAsset(std::string_view name);

// Headers sent with every dashboard file: the page may load only its own scripts, styles and
// API answers (no inline script, no third-party origin), and must not be framed.
inline constexpr std::string_view kUiContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

}  // namespace schedmate::api
