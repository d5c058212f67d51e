#include "plot/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include "core/file_util.h"
#include "core/strings.h"

namespace schedmate::plot {
namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string Esc(std::string_view s) { return XmlEscape(s); }

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string TickLabel(double v) {
  char buf[32];
  double a = std::fabs(v);
  if (a != 0 && (a >= 1e6 || a < 1e-3))
    std::snprintf(buf, sizeof buf, "%.1e", v);
  else if (a >= 100 || v == std::floor(v))
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  double Map(double v) const {  // to [0, 1]
    double a = log ? std::log10(v) : v, l = log ? std::log10(lo) : lo,
           h = log ? std::log10(hi) : hi;
    return h > l ? (a - l) / (h - l) : 0.5;
  }
  std::vector<double> Ticks() const {
    std::vector<double> t;
    if (log) {
      for (double p = std::floor(std::log10(lo)); p <= std::ceil(std::log10(hi)); p += 1) {
        double v = std::pow(10.0, p);
        if (v >= lo * 0.999 && v <= hi * 1.001) t.push_back(v);
      }
      if (t.size() >= 2) return t;
      t.clear();
    }
    double span = hi - lo;
    if (!(span > 0)) return {lo};
    double raw = span / 5, mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double m : {1.0, 2.0, 5.0, 10.0}) {
      if (m * mag >= raw) {
        step = m * mag;
        break;
      }
    }
    for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) t.push_back(v);
    return t;
  }
};

bool Usable(double v, bool log) { return std::isfinite(v) && (!log || v > 0); }

void RenderChart(const Chart& c, double ox, double oy, double w, double h, std::string& out) {
  const double ml = 70, mr = 150, mt = 30, mb = 45;
  double pw = w - ml - mr, ph = h - mt - mb;
  Axis ax{.log = c.log_x}, ay{.log = c.log_y};
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
  for (const auto& s : c.series) {
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!Usable(s.x[i], c.log_x) || !Usable(s.y[i], c.log_y)) continue;
      xlo = std::min(xlo, s.x[i]);
      xhi = std::max(xhi, s.x[i]);
      ylo = std::min(ylo, s.y[i]);
      yhi = std::max(yhi, s.y[i]);
    }
  }
  if (!std::isfinite(xlo)) {
    xlo = c.log_x ? 1 : 0;
    xhi = xlo + 1;
    ylo = c.log_y ? 1 : 0;
    yhi = ylo + 1;
  }
  if (!c.log_y && ylo > 0 && ylo < 0.5 * yhi) ylo = 0;
  if (xhi == xlo) {
    xhi = xlo + (c.log_x ? xlo : 1);
  }
  if (yhi == ylo) {
    yhi = ylo + (c.log_y ? ylo : 1);
  }
  ax.lo = xlo;
  ax.hi = xhi;
  ay.lo = ylo;
  ay.hi = yhi;
  auto X = [&](double v) { return ox + ml + ax.Map(v) * pw; };
  auto Y = [&](double v) { return oy + mt + (1 - ay.Map(v)) * ph; };

  out += "<text x=\"" + Num(ox + ml + pw / 2) + "\" y=\"" + Num(oy + 18) +
         "\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">" + Esc(c.title) +
         "</text>\n";
  out += "<rect x=\"" + Num(ox + ml) + "\" y=\"" + Num(oy + mt) + "\" width=\"" + Num(pw) +
         "\" height=\"" + Num(ph) + "\" fill=\"none\" stroke=\"#333\"/>\n";
  for (double t : ax.Ticks()) {
    double x = X(t);
    out += "<line x1=\"" + Num(x) + "\" y1=\"" + Num(oy + mt) + "\" x2=\"" + Num(x) + "\" y2=\"" +
           Num(oy + mt + ph) + "\" stroke=\"#ddd\"/>\n";
    out += "<text x=\"" + Num(x) + "\" y=\"" + Num(oy + mt + ph + 15) +
           "\" text-anchor=\"middle\" font-size=\"11\">" + TickLabel(t) + "</text>\n";
  }
  for (double t : ay.Ticks()) {
    double y = Y(t);
    out += "<line x1=\"" + Num(ox + ml) + "\" y1=\"" + Num(y) + "\" x2=\"" + Num(ox + ml + pw) +
           "\" y2=\"" + Num(y) + "\" stroke=\"#ddd\"/>\n";
    out += "<text x=\"" + Num(ox + ml - 5) + "\" y=\"" + Num(y + 4) +
           "\" text-anchor=\"end\" font-size=\"11\">" + TickLabel(t) + "</text>\n";
  }
  out += "<text x=\"" + Num(ox + ml + pw / 2) + "\" y=\"" + Num(oy + h - 8) +
         "\" text-anchor=\"middle\" font-size=\"12\">" + Esc(c.x_label) + "</text>\n";
  out += "<text transform=\"translate(" + Num(ox + 16) + "," + Num(oy + mt + ph / 2) +
         ") rotate(-90)\" text-anchor=\"middle\" font-size=\"12\">" + Esc(c.y_label) + "</text>\n";

  for (size_t si = 0; si < c.series.size(); ++si) {
    const Series& s = c.series[si];
    const char* color = kPalette[si % std::size(kPalette)];
    std::string pts;
    double last_y = 0;
    bool have = false;
    size_t n = std::min(s.x.size(), s.y.size());
    // Thin very long series to at most ~4 points per pixel column.
    size_t stride = std::max<size_t>(1, n / static_cast<size_t>(std::max(1.0, pw * 4)));
    for (size_t i = 0; i < n; i += (i + stride < n || i + 1 == n) ? stride : n - 1 - i) {
      if (!Usable(s.x[i], c.log_x) || !Usable(s.y[i], c.log_y)) {
        if (i + 1 == n) break;
        continue;
      }
      double x = X(s.x[i]), y = Y(s.y[i]);
      if (s.step && have) pts += Num(x) + "," + Num(last_y) + " ";
      pts += Num(x) + "," + Num(y) + " ";
      last_y = y;
      have = true;
      if (i + 1 == n) break;
    }
    out += "<polyline fill=\"none\" stroke=\"" + std::string(color) +
           "\" stroke-width=\"1.6\" points=\"" + pts + "\"/>\n";
    double ly = oy + mt + 12 + 16 * static_cast<double>(si);
    out += "<line x1=\"" + Num(ox + ml + pw + 10) + "\" y1=\"" + Num(ly - 4) + "\" x2=\"" +
           Num(ox + ml + pw + 28) + "\" y2=\"" + Num(ly - 4) + "\" stroke=\"" + color +
           "\" stroke-width=\"2\"/>\n";
    out += "<text x=\"" + Num(ox + ml + pw + 32) + "\" y=\"" + Num(ly) + "\" font-size=\"11\">" +
           Esc(s.name) + "</text>\n";
  }
}

}  // namespace

std::string RenderSvg(const Figure& f) {
  int cols = std::max(1, f.columns);
  int rows = static_cast<int>((f.charts.size() + static_cast<size_t>(cols) - 1) /
                              static_cast<size_t>(cols));
  rows = std::max(rows, 1);
  double top = f.title.empty() ? 0 : 30;
  double W = static_cast<double>(cols * f.chart_width), H = top + rows * f.chart_height;
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(W) + "\" height=\"" + Num(H) +
         "\" viewBox=\"0 0 " + Num(W) + " " + Num(H) + "\" font-family=\"sans-serif\">\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  if (!f.title.empty()) {
    out += "<text x=\"" + Num(W / 2) +
           "\" y=\"22\" text-anchor=\"middle\" font-size=\"16\" "
           "font-weight=\"bold\">" +
           Esc(f.title) + "</text>\n";
  }
  for (size_t i = 0; i < f.charts.size(); ++i) {
    double ox = static_cast<double>((static_cast<int>(i) % cols) * f.chart_width);
    double oy = top + static_cast<double>((static_cast<int>(i) / cols) * f.chart_height);
    RenderChart(f.charts[i], ox, oy, f.chart_width, f.chart_height, out);
  }
  out += "</svg>\n";
  return out;
}

Status WriteFigure(const Figure& figure, const std::string& path) {
  std::string lower = ToLower(path);
  std::string svg = RenderSvg(figure);
  if (EndsWith(lower, ".svg")) return WriteStringToFile(path, svg);
  if (!EndsWith(lower, ".png")) {
    return Status::InvalidArgument(path + ": plot file must end in .svg or .png");
  }
  if (path.find('\'') != std::string::npos) {
    return Status::InvalidArgument(path + ": PNG path must not contain a quote character");
  }
  if (std::system("command -v rsvg-convert >/dev/null 2>&1") != 0) {
    return Status::Unavailable(path +
                               ": PNG output needs rsvg-convert (apt-get install librsvg2-bin); "
                               "use a .svg file instead");
  }
  // The SVG goes to a uniquely named new file beside the target (never a predictable name that a
  // symlink could be planted at); rsvg-convert writes the PNG to a pipe and WriteStringToFile puts
  // it in place (atomically, refusing symlinks in world-writable directories).
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  SM_ASSIGN_OR_RETURN(std::string tmp, WriteTempFile(dir, "plot", ".svg", svg));
  std::string cmd = "rsvg-convert -f png '" + tmp + "' 2>/dev/null";
  std::string png;
  int rc = -1;
  if (std::FILE* pipe = ::popen(cmd.c_str(), "r"); pipe != nullptr) {
    char buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) png.append(buf, n);
    rc = ::pclose(pipe);
  }
  std::error_code ec;
  std::filesystem::remove(tmp, ec);
  if (rc != 0 || png.empty()) return Status::Internal(path + ": rsvg-convert failed");
  return WriteStringToFile(path, png);
}

Series CdfSeries(std::string name, std::vector<double> values) {
  std::sort(values.begin(), values.end());
  Series s{.name = std::move(name), .step = true};
  size_t n = values.size();
  for (size_t i = 0; i < n; ++i) {
    if (i + 1 < n && values[i + 1] == values[i]) continue;
    s.x.push_back(values[i]);
    s.y.push_back(static_cast<double>(i + 1) / static_cast<double>(n));
  }
  return s;
}

}  // namespace schedmate::plot
