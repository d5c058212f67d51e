#pragma once
// Line charts as SVG (and PNG through rsvg-convert when it is installed), for the plots people
// would rather look at than read: JCT CDFs, queue length over time, loss against step.
// Output is deterministic: same charts, same bytes.

#include <string>
#include <vector>

#include "core/status.h"

namespace schedmate::plot {

struct Series {
  std::string name;
  std::vector<double> x;
  std::vector<double> y;  // same length as x; NaN/inf points are skipped
  bool step = false;      // draw as a step function (CDFs)
};

struct Chart {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = false;  // non-positive x values are skipped on a log axis
  bool log_y = false;
  std::vector<Series> series;
};

struct Figure {
  std::string title;
  std::vector<Chart> charts;  // stacked top to bottom (or in a grid of `columns`)
  int columns = 1;
  int chart_width = 640;
  int chart_height = 360;
};

// The figure as an SVG document.
std::string RenderSvg(const Figure& figure);

// Writes `figure` to `path`: ".svg" as SVG; ".png" rendered by rsvg-convert (kUnavailable when
// it is not installed, naming the package). Any other extension: kInvalidArgument.
Status WriteFigure(const Figure& figure, const std::string& path);

// Helper: the empirical CDF of `values` as a step series (x sorted, y in (0, 1]).
Series CdfSeries(std::string name, std::vector<double> values);

}  // namespace schedmate::plot
