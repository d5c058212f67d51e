#pragma once
// The store tests run against both backends: each test binary links one definition of these
// (backend_sqlite.cc: a file in a temp directory; backend_pg.cc: a fresh schema per call on the
// server $SCHEDMATE_PG_URL names, skipped cleanly when it is unset).
#include <gtest/gtest.h>

#include <string>

namespace schedmate::store::testing {

// Why this backend cannot run here ("" when it can).
std::string BackendUnavailable();
// A fresh, empty database; opening the same location twice (or from a child process) reaches the
// same data.
std::string FreshStoreUrl();

}  // namespace schedmate::store::testing

#define SKIP_WITHOUT_STORE_BACKEND()                                                     \
  if (std::string why = ::schedmate::store::testing::BackendUnavailable(); !why.empty()) \
  GTEST_SKIP() << why
