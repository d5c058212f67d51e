#include "slurm/json_jobs_scan.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "core/file_util.h"
#include "core/rng.h"
#include "testing/test_util.h"

namespace schedmate::slurm::internal {
namespace {

using nlohmann::json;

bool Keep(std::string_view k) { return k == "job_id" || k == "name" || k == "nodes"; }

// What the scanner must return, from nlohmann's DOM: the last "jobs" array of a top-level
// object, its object elements reduced to the kept keys whose values are scalars.
std::optional<std::vector<json>> FromDom(std::string_view text) {
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return std::nullopt;
  auto it = doc.find("jobs");
  if (it == doc.end() || !it->is_array()) return std::nullopt;
  std::vector<json> out;
  for (const auto& e : *it) {
    if (!e.is_object()) continue;
    json o = json::object();
    for (const auto& [k, v] : e.items())
      if (Keep(k) && !v.is_structured()) o[k] = v;
    out.push_back(std::move(o));
  }
  return out;
}

std::string Fixture(const std::string& name) {
  auto text = ReadFileToString(testing::TestDataPath("slurm/" + name));
  EXPECT_TRUE(text.ok()) << name;
  return text.ok() ? *text : "";
}

TEST(ScanJsonObjects, CapturedQueuesReadAsTheDomReadsThem) {
  for (const char* f :
       {"squeue_mixed.json", "squeue_with_finished.json", "squeue_requeued_delayed.json"}) {
    std::string text = Fixture(f);
    auto fast = ScanJsonObjects(text, "jobs", Keep);
    ASSERT_TRUE(fast.has_value()) << f;
    EXPECT_EQ(*fast, *FromDom(text)) << f;
    EXPECT_FALSE(fast->empty()) << f;
  }
}

TEST(ScanJsonObjects, DecodesEscapesUtf8AndFollowsDomRules) {
  std::string text =
      "{\"meta\":{\"jobs\":[{\"job_id\":9}]}, \"jobs\" : [ 1, [2], \"x\", null,\n"
      " {\"job_id\":5, \"name\":\"a\\/b\\n\\\"q\\\" \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\","
      " \"nodes\":{\"x\":1}, \"name2\":[1,{\"a\":-1.5e3}], \"job_id\":-7},\n"
      " {\"nodes\":\"gpu1\", \"nodes\":[]}, {} ], \"errors\":[] }\n";
  auto fast = ScanJsonObjects(text, "jobs", Keep);
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(*fast, *FromDom(text));
  ASSERT_EQ(fast->size(), 3u);
  EXPECT_EQ((*fast)[0]["job_id"], -7);
  EXPECT_EQ((*fast)[0]["name"], "a/b\n\"q\" \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  EXPECT_FALSE((*fast)[1].contains("nodes"));
}

// What it does not decode itself, or does not accept, is left to nlohmann (nullopt).
TEST(ScanJsonObjects, LeavesToNlohmannWhatItDoesNotDecode) {
  for (std::string text : {
           std::string(R"({"jobs":[{"name":"\u00e9"}]})"),                // \u escape
           std::string(R"({"jobs":[{"job_id":1.0}]})"),                   // kept float
           std::string(R"({"jobs":[{"job_id":99999999999999999999}]})"),  // beyond int64
           std::string("{\"jobs\":[{\"name\":\"\xC0\xAF\"}]}"),           // overlong UTF-8
           std::string("{\"jobs\":[{\"x\":\"\xED\xA0\x80\"}]}"),  // a surrogate, skipped key
           std::string("{\"jobs\":[{\"x\":\"a\tb\"}]}"),          // control character
           std::string(R"({"jobs":[{"job_id":1}]} x)"),           // trailing text
           std::string(R"({"jobs":[{"job_id":01}]})"),            // bad number
           std::string(R"({"jobs":7})"),
           std::string(R"([{"jobs":[]}])"),
           std::string(R"({"meta":{}})"),
           std::string(""),
           std::string(R"({"jobs":[)") + std::string(100, '[') + std::string(100, ']') + "]}",
       }) {
    EXPECT_FALSE(ScanJsonObjects(text, "jobs", Keep).has_value()) << text;
  }
}

// Whenever the scanner answers, nlohmann reads the same document and reduces it the same way:
// single-byte changes of a small queue, from a seeded stream.
TEST(ScanJsonObjects, AnswersOnlyWhatTheDomAgreesWith) {
  const std::string base =
      R"({"meta":{"v":[1,2.5e1,true]},"jobs":[{"job_id":12,"name":"tr\/ain","nodes":"g[1-2]",)"
      R"("x":{"y":[null,false,-0.5]}},{"job_id":13,"name":"b"}],"errors":[]})";
  const std::string alphabet = "{}[]\":,.-+eE0123456789 \\/ntrufalsejobs\x80\xC3\xA9";
  Rng rng(42);
  int answered = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string t = base;
    int edits = 1 + static_cast<int>(rng.Below(2));
    for (int e = 0; e < edits; ++e) {
      size_t at = rng.Below(t.size());
      char c = alphabet[rng.Below(alphabet.size())];
      switch (rng.Below(3)) {
        case 0:
          t[at] = c;
          break;
        case 1:
          t.insert(at, 1, c);
          break;
        default:
          t.erase(at, 1);
      }
    }
    auto fast = ScanJsonObjects(t, "jobs", Keep);
    if (!fast) continue;
    ++answered;
    auto dom = FromDom(t);
    ASSERT_TRUE(dom.has_value()) << t;
    ASSERT_EQ(*fast, *dom) << t;
  }
  EXPECT_GT(answered, 1000);
}

}  // namespace
}  // namespace schedmate::slurm::internal
