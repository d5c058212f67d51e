#include "api/ui_assets.h"

namespace schedmate::api {

const UiAsset* FindUiAsset(std::string_view name) {
  if (name.empty() || name.front() == '.' || name.find('/') != std::string_view::npos) {
    return nullptr;
  }
  for (const auto& a : EmbeddedUiAssets()) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

}  // namespace schedmate::api
