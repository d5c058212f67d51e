#pragma once
// NamedRegistry<Factory>: factories by name, kept in registration order; the part PolicyRegistry
// and EstimatorRegistry share. Register fails with kInvalidArgument for an empty name or an empty
// factory and kAlreadyExists for a name already taken; Find fails with kNotFound listing the known
// names in registration order. `what` names the kind of thing in those messages ("policy",
// "estimator"). Not thread-safe for registration; lookups are const.

#include <fmt/format.h>

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "core/status.h"

namespace schedmate::policy {

template <typename Factory>
class NamedRegistry {
 public:
  Status Register(std::string name, std::string description, Factory factory) {
    if (name.empty() || !factory) {
      return Status::InvalidArgument(fmt::format("{} needs a name and factory", what_));
    }
    if (entries_.count(name)) {
      return Status::AlreadyExists(fmt::format("{} '{}' is already registered", what_, name));
    }
    order_.push_back(name);
    entries_.emplace(std::move(name), Entry{std::move(description), std::move(factory)});
    return Status::Ok();
  }
  bool Contains(const std::string& name) const { return entries_.count(name) > 0; }
  // Names in registration order.
  const std::vector<std::string>& Names() const { return order_; }
  // "" for an unknown name.
  std::string Description(const std::string& name) const {
    auto it = entries_.find(name);
    return it == entries_.end() ? std::string() : it->second.description;
  }

 protected:
  explicit NamedRegistry(std::string_view what) : what_(what) {}
  // The factory registered as `name`; valid while the registry lives.
  Result<const Factory*> Find(const std::string& name) const {
    auto it = entries_.find(name);
    if (it == entries_.end()) {
      return Status::NotFound(
          fmt::format("unknown {} '{}' (known: {})", what_, name, fmt::join(order_, ", ")));
    }
    return &it->second.factory;
  }

 private:
  struct Entry {
    std::string description;
    Factory factory;
  };
  std::string what_;
  std::map<std::string, Entry> entries_;
  std::vector<std::string> order_;
};

}  // namespace schedmate::policy
