// The report's three forms: JSON (stable names), aligned text tables, and an HTML page with
// inline SVG plots. Numbers are rounded the same way in all three (GPU-hours to 4 decimals,
// seconds to 1, fractions to 4), so the forms agree.

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <ctime>
#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "plot/svg_plot.h"
#include "service/report.h"

namespace schedmate::service {
namespace {

using nlohmann::json;

double Round(double x, int decimals) {
  const double k = std::pow(10.0, decimals);
  const double r = std::round(x * k) / k;
  return r == 0 ? 0 : r;  // no "-0"
}

json Opt(const std::optional<double>& v, int decimals) {
  return v ? json(Round(*v, decimals)) : json(nullptr);
}

std::string UtcText(SimTime t) {
  const std::time_t s = static_cast<std::time_t>(t.seconds());
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string Hours(const std::optional<double>& h) {
  return h ? fmt::format("{:.2f}", Round(*h, 4)) : "unknown";
}
std::string Percent(const std::optional<double>& f) {
  return f ? fmt::format("{:.1f}%", Round(*f * 100, 2)) : "n/a";
}
std::string Wait(double s) {
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 7200) return fmt::format("{:.1f} min", s / 60);
  return fmt::format("{:.1f} h", s / 3600);
}

// A table as rows of cells; the first row is the header. A column whose cells are all numbers
// (or "unknown"/"n/a") is right-aligned, others left-aligned.
using Table = std::vector<std::vector<std::string>>;

std::vector<bool> RightAligned(const Table& t) {
  std::vector<bool> right;
  for (size_t r = 1; r < t.size(); ++r) {
    for (size_t i = 0; i < t[r].size(); ++i) {
      const std::string& c = t[r][i];
      const bool number = (!c.empty() && std::isdigit(static_cast<unsigned char>(c[0]))) ||
                          c == "unknown" || c == "n/a";
      if (right.size() <= i) right.push_back(i > 0);
      right[i] = right[i] && number;
    }
  }
  return right;
}

std::string RenderText(const Table& t) {
  std::vector<size_t> width;
  for (const auto& row : t)
    for (size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], row[i].size());
    }
  const std::vector<bool> right = RightAligned(t);
  std::string out;
  for (const auto& row : t) {
    std::string line = " ";
    for (size_t i = 0; i < row.size(); ++i) {
      line += i < right.size() && right[i] ? fmt::format(" {:>{}}", row[i], width[i])
                                           : fmt::format(" {:<{}}", row[i], width[i]);
      line += " ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string Escape(std::string_view s) { return XmlEscape(s); }

std::string RenderHtml(const Table& t) {
  const std::vector<bool> right = RightAligned(t);
  std::string out = "<table>\n";
  for (size_t r = 0; r < t.size(); ++r) {
    out += "<tr>";
    for (size_t i = 0; i < t[r].size(); ++i) {
      const char* tag = r == 0 ? "th" : "td";
      const bool n = i < right.size() && right[i];
      out += fmt::format("<{}{}>{}</{}>", tag, n ? " class=\"n\"" : "", Escape(t[r][i]), tag);
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

Table GpuTable(const std::vector<GpuHoursRow>& rows, const std::string& what) {
  Table t{{what, "jobs", "allocated GPU-h", "used GPU-h", "tracked GPU-h"}};
  for (const auto& r : rows) {
    t.push_back({r.name, std::to_string(r.jobs), Hours(r.allocated_gpu_hours),
                 Hours(r.used_gpu_hours), Hours(r.tracked_gpu_hours)});
  }
  return t;
}

// Every table of the report, titled, in print order.
std::vector<std::pair<std::string, Table>> Tables(const Report& r) {
  std::vector<std::pair<std::string, Table>> out;
  out.emplace_back("GPU-hours by user", GpuTable(r.by_user, "user"));
  out.emplace_back("GPU-hours by partition", GpuTable(r.by_partition, "partition"));
  Table waste{{"waste", "GPU-h", "jobs", "how counted"}};
  for (const auto& w : r.waste)
    waste.push_back({w.category, Hours(w.gpu_hours), std::to_string(w.jobs), w.basis});
  out.emplace_back("Waste", std::move(waste));
  Table queue{{"partition", "jobs", "avg wait", "p50 wait", "p95 wait", "max wait"}};
  for (const auto& q : r.queueing) {
    queue.push_back({q.partition, std::to_string(q.jobs), Wait(q.avg_wait_s), Wait(q.p50_wait_s),
                     Wait(q.p95_wait_s), Wait(q.max_wait_s)});
  }
  out.emplace_back("Queueing (runs started in the period)", std::move(queue));
  Table failures{{"class", "category", "failures", "GPU-h"}};
  for (const auto& f : r.failures)
    failures.push_back({f.cls, f.category, std::to_string(f.failures), Hours(f.gpu_hours)});
  out.emplace_back(fmt::format("Failures: {} infra, {} app, {} unknown", r.failures_infra,
                               r.failures_app, r.failures_unknown),
                   std::move(failures));
  Table actions{{"action", "outcome", "count", "dry run"}};
  for (const auto& a : r.actions)
    actions.push_back({a.kind, a.outcome, std::to_string(a.count), std::to_string(a.dry_run)});
  out.emplace_back("Actions", std::move(actions));
  const AccuracySummary& a = r.accuracy;
  Table acc{{"prediction accuracy", "value"},
            {"completed runs scored", std::to_string(a.jobs)},
            {"within x2", Percent(a.within_2x)},
            {"median |log2(actual/predicted)|",
             a.median_abs_log2 ? fmt::format("{:.3f}", Round(*a.median_abs_log2, 4)) : "n/a"},
            {"p10-p90 coverage", Percent(a.p10_p90_coverage)},
            {"completed without a prediction", std::to_string(a.ended_without_prediction)},
            {"ended otherwise (not scored)", std::to_string(a.not_completed)}};
  out.emplace_back("Advisor", std::move(acc));
  return out;
}

std::string Header(const Report& r) {
  return fmt::format(
      "schedmate report {} .. {}\n{} runs in the period, {} GPU-hours allocated, used {}"
      " (tracked for {} GPU-hours), {} job(s) not ended\n",
      UtcText(r.since), UtcText(r.until), r.runs_in_period, Hours(r.allocated_gpu_hours),
      Hours(r.used_gpu_hours), Hours(r.tracked_gpu_hours), r.unfinished_jobs);
}

std::string InlineSvg(const plot::Figure& f) {
  std::string svg = plot::RenderSvg(f);
  if (svg.rfind("<?xml", 0) == 0) svg.erase(0, svg.find('\n') + 1);
  return svg;
}

// An empirical CDF that starts from 0 at its first value, so a single run still draws a step.
plot::Series Cdf(std::string name, std::vector<double> values) {
  plot::Series s = plot::CdfSeries(std::move(name), std::move(values));
  if (!s.x.empty()) {
    s.x.insert(s.x.begin(), s.x.front());
    s.y.insert(s.y.begin(), 0.0);
  }
  return s;
}

// Allocated GPU-hours per UTC day as steps over every day of the period (0 where none), one
// series per partition; nothing for periods over 10 years (too many days to draw).
std::optional<plot::Chart> DailyChart(const Report& r) {
  constexpr int64_t kDay = 86'400;
  int64_t first = r.since.seconds() / kDay * kDay;
  if (r.since.seconds() < first) first -= kDay;
  const int64_t end = r.until.seconds();
  if (r.daily_gpu_hours.empty() || (end - first) / kDay > 3660) return std::nullopt;
  plot::Chart c{"Allocated GPU-hours per UTC day",
                "days since " + UtcText(r.since),
                "GPU-hours",
                false,
                false,
                {}};
  for (const auto& [vc, days] : r.daily_gpu_hours) {
    plot::Series s{vc, {}, {}, /*step=*/true};
    double last = 0;
    int64_t day = first;
    for (; day < end; day += kDay) {
      auto it = days.find(day);
      last = it != days.end() ? it->second : 0.0;
      s.x.push_back(static_cast<double>(day - r.since.seconds()) / kDay);
      s.y.push_back(last);
    }
    s.x.push_back(static_cast<double>(day - r.since.seconds()) / kDay);  // the last day's end
    s.y.push_back(last);
    c.series.push_back(std::move(s));
  }
  return c;
}

std::vector<plot::Chart> Charts(const Report& r) {
  std::vector<plot::Chart> charts;
  if (auto daily = DailyChart(r)) charts.push_back(std::move(*daily));
  bool any_wait = false;  // a CDF of zeros alone draws nothing useful
  for (const auto& [vc, waits] : r.waits_s)
    any_wait = any_wait || (!waits.empty() && waits.back() > 0);
  if (any_wait) {
    plot::Chart c{
        "Queueing time by partition (CDF)", "wait (hours)", "fraction of runs", false, false, {}};
    for (const auto& [vc, waits] : r.waits_s) {
      std::vector<double> h;
      for (double w : waits) h.push_back(w / 3600);
      c.series.push_back(Cdf(vc, std::move(h)));
    }
    charts.push_back(std::move(c));
  }
  if (!r.accuracy.ratios.empty()) {
    plot::Chart c{"Advisor: actual / predicted duration (CDF; 0.5..2 is within x2)",
                  "actual / predicted",
                  "fraction of runs",
                  true,
                  false,
                  {}};
    c.series.push_back(Cdf("completed runs", r.accuracy.ratios));
    charts.push_back(std::move(c));
  }
  return charts;
}

}  // namespace

json ReportToJson(const Report& r) {
  auto rows = [](const std::vector<GpuHoursRow>& v) {
    json a = json::array();
    for (const auto& x : v) {
      a.push_back({{"name", x.name},
                   {"jobs", x.jobs},
                   {"allocated_gpu_hours", Round(x.allocated_gpu_hours, 4)},
                   {"used_gpu_hours", Opt(x.used_gpu_hours, 4)},
                   {"tracked_gpu_hours", Round(x.tracked_gpu_hours, 4)}});
    }
    return a;
  };
  json waste = json::array(), queue = json::array(), causes = json::array(),
       actions = json::array();
  for (const auto& w : r.waste) {
    waste.push_back({{"category", w.category},
                     {"gpu_hours", Opt(w.gpu_hours, 4)},
                     {"jobs", w.jobs},
                     {"basis", w.basis}});
  }
  for (const auto& q : r.queueing) {
    queue.push_back({{"partition", q.partition},
                     {"jobs", q.jobs},
                     {"avg_wait_s", Round(q.avg_wait_s, 1)},
                     {"p50_wait_s", Round(q.p50_wait_s, 1)},
                     {"p95_wait_s", Round(q.p95_wait_s, 1)},
                     {"max_wait_s", Round(q.max_wait_s, 1)}});
  }
  for (const auto& f : r.failures) {
    causes.push_back({{"class", f.cls},
                      {"category", f.category},
                      {"failures", f.failures},
                      {"gpu_hours", Round(f.gpu_hours, 4)}});
  }
  for (const auto& a : r.actions) {
    actions.push_back(
        {{"kind", a.kind}, {"outcome", a.outcome}, {"count", a.count}, {"dry_run", a.dry_run}});
  }
  const AccuracySummary& a = r.accuracy;
  return json{
      {"since", r.since.seconds()},
      {"until", r.until.seconds()},
      {"runs_in_period", r.runs_in_period},
      {"unfinished_jobs", r.unfinished_jobs},
      {"gpu_hours",
       {{"allocated", Round(r.allocated_gpu_hours, 4)},
        {"used", Opt(r.used_gpu_hours, 4)},
        {"tracked", Round(r.tracked_gpu_hours, 4)}}},
      {"by_user", rows(r.by_user)},
      {"by_partition", rows(r.by_partition)},
      {"waste", std::move(waste)},
      {"queueing", std::move(queue)},
      {"failures",
       {{"infra", r.failures_infra},
        {"app", r.failures_app},
        {"unknown", r.failures_unknown},
        {"by_cause", std::move(causes)}}},
      {"actions", std::move(actions)},
      {"prediction_accuracy",
       {{"jobs", a.jobs},
        {"ended_without_prediction", a.ended_without_prediction},
        {"not_completed", a.not_completed},
        {"within_2x", Opt(a.within_2x, 4)},
        {"median_abs_log2_ratio", Opt(a.median_abs_log2, 4)},
        {"p10_p90_coverage", Opt(a.p10_p90_coverage, 4)}}},
      {"notes", r.notes},
  };
}

std::string ReportToText(const Report& r) {
  std::string out = Header(r);
  for (const auto& [title, table] : Tables(r)) {
    out += "\n" + title + "\n";
    out += table.size() > 1 ? RenderText(table) : "  (none)\n";
  }
  if (!r.notes.empty()) out += "\nNotes\n";
  for (const auto& n : r.notes) out += "  - " + n + "\n";
  return out;
}

std::string ReportToHtml(const Report& r) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>schedmate report</title>\n<style>\n"
      "body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse;"
      "margin:0.5em 0 1.5em}th,td{border:1px solid #ccc;padding:3px 8px}th{background:#eee}"
      "td.n,th.n{text-align:right}figure{margin:1em 0}\n</style>\n</head>\n<body>\n";
  out += fmt::format("<h1>schedmate report</h1>\n<p>{} .. {}</p>\n", Escape(UtcText(r.since)),
                     Escape(UtcText(r.until)));
  out += "<p>" + Escape(Header(r).substr(Header(r).find('\n') + 1)) + "</p>\n";
  for (const auto& [title, table] : Tables(r)) {
    out += "<h2>" + Escape(title) + "</h2>\n";
    out += table.size() > 1 ? RenderHtml(table) : "<p>(none)</p>\n";
  }
  const std::vector<plot::Chart> charts = Charts(r);
  if (!charts.empty()) out += "<h2>Plots</h2>\n";
  for (const plot::Chart& c : charts) {
    plot::Figure f;
    f.charts.push_back(c);
    out += "<figure>\n" + InlineSvg(f) + "</figure>\n";
  }
  if (!r.notes.empty()) {
    out += "<h2>Notes</h2>\n<ul>\n";
    for (const auto& n : r.notes) out += "<li>" + Escape(n) + "</li>\n";
    out += "</ul>\n";
  }
  return out + "</body>\n</html>\n";
}

}  // namespace schedmate::service
