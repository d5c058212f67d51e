// The embedded dashboard: served at / and /ui/ with the right types and headers, no token needed,
// only local references; and the scene the browser test renders has data on every panel.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "api/ui_assets.h"
#include "dashboard_fixture.h"

namespace schedmate::api {
namespace {

using nlohmann::json;

class DashboardAssetsTest : public testing::DashboardFixture {};

TEST(UiAssetsTest, FindsOnlyPlainNames) {
  ASSERT_NE(FindUiAsset("index.html"), nullptr);
  ASSERT_NE(FindUiAsset("app.js"), nullptr);
  ASSERT_NE(FindUiAsset("style.css"), nullptr);
  EXPECT_EQ(FindUiAsset(""), nullptr);
  EXPECT_EQ(FindUiAsset("../app.js"), nullptr);
  EXPECT_EQ(FindUiAsset("ui/app.js"), nullptr);
  EXPECT_EQ(FindUiAsset(".app.js"), nullptr);
  EXPECT_EQ(FindUiAsset("missing.js"), nullptr);
  EXPECT_EQ(FindUiAsset("index.html")->content_type, "text/html; charset=utf-8");
  // The embedded text is the file in web/ui/, verbatim.
  auto on_disk = ReadFileToString(std::string(SCHEDMATE_SOURCE_DIR) + "/web/ui/app.js");
  ASSERT_OK(on_disk);
  EXPECT_EQ(FindUiAsset("app.js")->body, *on_disk);
}

TEST_F(DashboardAssetsTest, RootAndAssetsServedWithTypesAndNoToken) {
  StartWithScene();
  struct Want {
    const char* path;
    const char* type;
    const char* contains;
  };
  for (const Want& w : {Want{"/", "text/html; charset=utf-8", "<title>schedmate</title>"},
                        Want{"/ui/index.html", "text/html; charset=utf-8", "/ui/app.js"},
                        Want{"/ui/app.js", "text/javascript; charset=utf-8", "textContent"},
                        Want{"/ui/style.css", "text/css; charset=utf-8", ".badge"}}) {
    auto res = client_->Get(w.path);  // no Authorization header
    ASSERT_TRUE(res) << w.path;
    EXPECT_EQ(res->status, 200) << w.path;
    EXPECT_EQ(res->get_header_value("Content-Type"), w.type) << w.path;
    EXPECT_NE(res->body.find(w.contains), std::string::npos) << w.path;
    EXPECT_EQ(res->get_header_value("X-Content-Type-Options"), "nosniff") << w.path;
    std::string csp = res->get_header_value("Content-Security-Policy");
    EXPECT_NE(csp.find("script-src 'self'"), std::string::npos) << w.path;
    EXPECT_NE(csp.find("connect-src 'self'"), std::string::npos) << w.path;
    EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos) << w.path;
  }
  for (const char* bad :
       {"/ui/missing.js", "/ui/..%2Fapi_server.cc", "/ui/.hidden", "/ui/", "/ui/a/b.js"}) {
    auto res = client_->Get(bad);
    ASSERT_TRUE(res) << bad;
    EXPECT_EQ(res->status, 404) << bad;
  }
  // The JSON API is unchanged beside it.
  auto jobs = client_->Get("/v1/jobs");
  ASSERT_TRUE(jobs);
  EXPECT_EQ(jobs->get_header_value("Content-Type"), "application/json");
}

TEST_F(DashboardAssetsTest, PageReferencesOnlyLocalAssets) {
  StartWithScene();
  auto page = client_->Get("/");
  ASSERT_TRUE(page);
  std::string html = page->body;
  std::regex ref(R"re((src|href)\s*=\s*"([^"]*)")re");
  std::set<std::string> refs;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), ref); it != std::sregex_iterator();
       ++it) {
    refs.insert((*it)[2].str());
  }
  EXPECT_TRUE(refs.count("/ui/app.js"));
  EXPECT_TRUE(refs.count("/ui/style.css"));
  for (const auto& r : refs) {
    EXPECT_EQ(r.rfind("/", 0), 0u) << r << " is not a same-origin absolute path";
    EXPECT_NE(r.rfind("//", 0), 0u) << r << " is protocol-relative (another host)";
    if (r.rfind("/ui/", 0) == 0) {
      auto res = client_->Get(r.c_str());
      ASSERT_TRUE(res);
      EXPECT_EQ(res->status, 200) << r << " is referenced but not served";
    }
  }
  EXPECT_EQ(html.find("<script>"), std::string::npos) << "inline script (the CSP forbids it)";
  EXPECT_EQ(html.find("style=\""), std::string::npos) << "inline style (the CSP forbids it)";
  // No absolute URL anywhere but the SVG namespace; the CSS loads nothing.
  for (const auto& a : EmbeddedUiAssets()) {
    std::string body(a.body);
    for (size_t at = body.find("http"); at != std::string::npos; at = body.find("http", at + 1)) {
      std::string rest = body.substr(at, 40);
      if (rest.rfind("http://", 0) != 0 && rest.rfind("https://", 0) != 0) continue;
      EXPECT_EQ(rest.rfind("http://www.w3.org/2000/svg", 0), 0u) << a.name << ": " << rest;
    }
    EXPECT_EQ(body.find("@import"), std::string::npos) << a.name;
    EXPECT_EQ(body.find("url("), std::string::npos) << a.name;
  }
  // The script never writes markup from data.
  std::string js(FindUiAsset("app.js")->body);
  EXPECT_EQ(js.find(".innerHTML"), std::string::npos);
  EXPECT_EQ(js.find(".outerHTML"), std::string::npos);
  EXPECT_EQ(js.find("insertAdjacentHTML"), std::string::npos);
  EXPECT_EQ(js.find("document.write"), std::string::npos);
}

// The browser test compares the page against these answers; make sure they are not thin.
TEST_F(DashboardAssetsTest, SceneHasDataOnEveryPanel) {
  StartWithScene();
  auto get = [&](const char* path) {
    auto res = client_->Get(path);
    EXPECT_TRUE(res) << path;
    return res ? json::parse(res->body, nullptr, false) : json();
  };
  json jobs = get("/v1/jobs")["jobs"];
  ASSERT_EQ(jobs.size(), 6u);
  std::map<std::string, std::string> state;
  std::map<std::string, json> metrics;
  for (const auto& j : jobs) {
    state[j["id"]] = j["state"];
    metrics[j["id"]] = j["metrics"];
  }
  EXPECT_EQ(state["105"], "RUNNING");
  EXPECT_EQ(metrics["105"]["stalled"], true) << metrics["105"].dump();
  EXPECT_EQ(metrics["101"]["stalled"], false) << metrics["101"].dump();
  EXPECT_TRUE(metrics["101"]["progress"].is_number());
  EXPECT_EQ(state["101"], "RUNNING");
  EXPECT_EQ(state["102"], "RUNNING");
  EXPECT_EQ(state["103"], "PENDING");
  EXPECT_EQ(state["201"], "PENDING");
  json starts = get("/v1/start-estimates")["pending"];
  ASSERT_EQ(starts.size(), 3u);
  for (const auto& e : starts) EXPECT_TRUE(e["estimated_start"].is_number()) << e.dump();
  json failures = get("/v1/failures")["failures"];
  ASSERT_EQ(failures.size(), 2u);
  std::set<std::string> classes;
  for (const auto& f : failures) classes.insert(f["class"].get<std::string>());
  EXPECT_EQ(classes, (std::set<std::string>{"app", "infra"}));
  json actions = get("/v1/actions")["actions"];
  std::set<std::string> kinds;
  for (const auto& a : actions) kinds.insert(a["kind"].get<std::string>());
  EXPECT_TRUE(kinds.count("drain") && kinds.count("requeue") && kinds.count("notify"))
      << actions.dump();
  json nodes = get("/v1/nodes")["nodes"];
  ASSERT_EQ(nodes.size(), 4u);
  EXPECT_EQ(nodes[1]["name"], "gpu2");
  EXPECT_EQ(nodes[1]["drained"], true);
  json samples = get("/v1/jobs/101/metrics")["samples"];
  ASSERT_GE(samples.size(), 8u);
  int with_both = 0;
  for (const auto& s : samples) with_both += s["loss"].is_number() && s["step_time_s"].is_number();
  EXPECT_GE(with_both, 8);
  EXPECT_EQ(get("/v1/jobs/102")["name"], testing::kXssJobName);
}

}  // namespace
}  // namespace schedmate::api
