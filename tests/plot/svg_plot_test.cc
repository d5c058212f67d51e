#include "plot/svg_plot.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>

#include "core/file_util.h"
#include "testing/test_util.h"

namespace schedmate::plot {
namespace {

TEST(SvgPlotTest, CdfSeriesIsMonotoneAndEndsAtOne) {
  Series s = CdfSeries("jct", {5, 1, 3, 3});
  ASSERT_EQ(s.x.size(), 3u);  // duplicates collapse into one step
  EXPECT_EQ(s.x, (std::vector<double>{1, 3, 5}));
  EXPECT_EQ(s.y, (std::vector<double>{0.25, 0.75, 1.0}));
}

TEST(SvgPlotTest, RendersDeterministicSvgWithLegendAndTitle) {
  Figure f{.title = "JCT <CDF>"};
  f.charts.push_back(
      Chart{.title = "fifo vs sjf",
            .x_label = "JCT (s)",
            .y_label = "share",
            .log_x = true,
            .series = {CdfSeries("fifo", {10, 100, 1000}), CdfSeries("sjf", {5, 50})}});
  std::string a = RenderSvg(f), b = RenderSvg(f);
  EXPECT_EQ(a, b);
  EXPECT_NE(a.find("<svg"), std::string::npos);
  EXPECT_NE(a.find("JCT &lt;CDF&gt;"), std::string::npos);  // escaped
  EXPECT_NE(a.find(">fifo</text>"), std::string::npos);
  EXPECT_NE(a.find(">sjf</text>"), std::string::npos);
  EXPECT_EQ(a.find("nan"), std::string::npos);
}

TEST(SvgPlotTest, SkipsNonFiniteAndEmptyChartsWithoutCrashing) {
  Figure f;
  f.charts.push_back(Chart{.title = "empty"});
  f.charts.push_back(Chart{.title = "bad values",
                           .log_y = true,
                           .series = {Series{.name = "loss", .x = {1, 2, 3}, .y = {NAN, -1, 2}}}});
  std::string svg = RenderSvg(f);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
}

TEST(SvgPlotTest, WritesSvgAndRejectsUnknownExtension) {
  testing::TempDir tmp;
  Figure f;
  f.charts.push_back(Chart{.series = {Series{.name = "a", .x = {0, 1}, .y = {0, 1}}}});
  ASSERT_OK(WriteFigure(f, tmp.File("p.svg")));
  auto text = ReadFileToString(tmp.File("p.svg"));
  ASSERT_OK(text);
  EXPECT_NE(text->find("polyline"), std::string::npos);
  EXPECT_EQ(WriteFigure(f, tmp.File("p.jpg")).code(), StatusCode::kInvalidArgument);
}

// Issue 17, defect 4: PNG output went through the predictable "<out>.tmp.svg", so a symlink
// planted there made the writer (root) overwrite its target. Now the victim stays unchanged and
// no name derived from the output is used.
TEST(SvgPlotTest, PngOutputIgnoresASymlinkPlantedAtTheOldTempName) {
  if (std::system("command -v rsvg-convert >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "rsvg-convert not installed";
  }
  testing::TempDir tmp;
  const std::string victim = tmp.File("victim");
  ASSERT_OK(WriteStringToFile(victim, "precious"));
  const std::string png = tmp.File("p.png");
  ASSERT_EQ(::symlink(victim.c_str(), (png + ".tmp.svg").c_str()), 0);
  Figure f;
  f.charts.push_back(Chart{.series = {Series{.name = "a", .x = {0, 1}, .y = {0, 1}}}});
  ASSERT_OK(WriteFigure(f, png));
  auto v = ReadFileToString(victim);
  ASSERT_OK(v);
  EXPECT_EQ(*v, "precious");
  auto bytes = ReadFileToString(png);
  ASSERT_OK(bytes);
  EXPECT_EQ(bytes->substr(0, 4), "\x89PNG");
}

}  // namespace
}  // namespace schedmate::plot
