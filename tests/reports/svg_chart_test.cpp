// The SVG charts: tick choice (covering, evenly spaced, 1/2/5 steps), one mark per point with its interval,
// everything from the store escaped.
#include "reports/html/svg_chart.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace infertune {
namespace {

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

TEST(NiceTicks, CoverTheRangeInOneTwoFiveSteps) {
  for (const auto& [low, high] : {std::pair{0.0, 97.0}, {3.2, 3.9}, {-12.0, 480.0}, {0.0, 1e-3}, {1e5, 2.5e5}}) {
    const std::vector<double> ticks = nice_ticks(low, high, 5);
    ASSERT_GE(ticks.size(), 2u) << low << ".." << high;
    EXPECT_LE(ticks.front(), low);
    EXPECT_GE(ticks.back(), high);
    EXPECT_LE(ticks.size(), 12u);
    const double step = ticks[1] - ticks[0];
    for (size_t i = 2; i < ticks.size(); ++i) EXPECT_NEAR(ticks[i] - ticks[i - 1], step, step * 1e-9);
    const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-12));
    EXPECT_TRUE(std::abs(mantissa - 1) < 1e-9 || std::abs(mantissa - 2) < 1e-9 || std::abs(mantissa - 5) < 1e-9)
        << "step " << step;
  }
  EXPECT_EQ(nice_ticks(0, 97, 5), (std::vector<double>{0, 20, 40, 60, 80, 100}));
}

TEST(TickLabel, ShortForms) {
  EXPECT_EQ(tick_label(0), "0");
  EXPECT_EQ(tick_label(2.5), "2.5");
  EXPECT_EQ(tick_label(20000), "20k");
  EXPECT_EQ(tick_label(3e6), "3M");
}

Chart two_series_chart() {
  Chart chart;
  chart.title = "tokens/s by <threads>";
  chart.x = {"-t", {"1", "2", "4"}, true};
  chart.y = {"tokens/s", {}, true};
  chart.series.push_back({"tg32 & co", {{0, 10, 9, 11, "a <b>"}, {1, 19, 18, 20, "b"}, {2, 30, {}, {}, "c"}}, true});
  chart.series.push_back({"pp128", {{0, 100, 95, 105, "d", true}}, false});
  chart.markers.push_back({1, "change at build 2"});
  return chart;
}

TEST(SvgChart, OneMarkPerPointWithItsInterval) {
  const std::string svg = render_svg_chart(two_series_chart());
  EXPECT_TRUE(svg.starts_with("<svg ")) << svg.substr(0, 80);
  EXPECT_TRUE(svg.ends_with("</svg>"));
  // 4 points + 2 legend dots.
  EXPECT_EQ(count(svg, "<circle"), 6u);
  EXPECT_EQ(count(svg, "class=\"emph\""), 1u);
  // Three points have intervals: a vertical line and two caps each.
  EXPECT_EQ(count(svg, "<line stroke="), 9u);
  EXPECT_EQ(count(svg, "class=\"series-line\""), 1u);  // only the joined series
  EXPECT_EQ(count(svg, "class=\"marker\""), 1u);
  for (const char* label : {">1<", ">2<", ">4<"}) EXPECT_NE(svg.find(label), std::string::npos) << label;
}

TEST(SvgChart, TextIsEscaped) {
  const std::string svg = render_svg_chart(two_series_chart());
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  EXPECT_EQ(svg.find("<threads>"), std::string::npos);
  EXPECT_NE(svg.find("a &lt;b&gt;"), std::string::npos);
  EXPECT_NE(svg.find("tg32 &amp; co"), std::string::npos);
}

TEST(SvgChart, EmptyAndDegenerateChartsStillDraw) {
  Chart empty;
  empty.title = "nothing";
  EXPECT_NE(render_svg_chart(empty).find("</svg>"), std::string::npos);
  Chart flat;
  ChartPoint only;
  only.x = 5;
  only.y = 7;
  flat.series.push_back({"one", {only}, true});
  const std::string svg = render_svg_chart(flat);
  EXPECT_EQ(svg.find("nan"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("inf"), std::string::npos) << svg;
}

}  // namespace
}  // namespace infertune

namespace infertune {
namespace {

TEST(SvgChart, CategoryLabelsKeepWhatTellsThemApart) {
  Chart chart;
  chart.x.categories = {"synthetic-llama-1b-q4_0.gguf", "synthetic-llama-1b-q4_k_m.gguf", "synthetic-llama-1b-q8_0.gguf"};
  ChartPoint p;
  p.y = 1;
  chart.series.push_back({"s", {p}, false});
  const std::string svg = render_svg_chart(chart);
  for (const char* label : {">…q4_0<", ">…q4_k_m<", ">…q8_0<"}) EXPECT_NE(svg.find(label), std::string::npos) << label;
  chart.x.categories = {"a-very-long-configuration-name-one", "short"};
  const std::string cut = render_svg_chart(chart);
  EXPECT_NE(cut.find(">a-very-…name-one<"), std::string::npos) << "long labels are cut in the middle";
  EXPECT_NE(cut.find(">short<"), std::string::npos);
}

}  // namespace
}  // namespace infertune
