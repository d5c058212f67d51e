#pragma once
// The compiled-in failure signature set, loaded once per test binary (a broken knowledge base
// fails every test that uses it, loudly).

#include "core/check.h"
#include "failure/signature_set.h"

namespace schedmate::failure {

inline const SignatureSet& BuiltinSignatures() {
  static const SignatureSet* set = [] {
    auto r = SignatureSet::Builtin();
    SM_CHECK(r.ok()) << r.status().ToString();
    return new SignatureSet(std::move(r).value());
  }();
  return *set;
}

}  // namespace schedmate::failure
