#pragma once
// Charts drawn as inline SVG by our own code, so a report is one self-contained file that opens offline
// in any browser (no script library, no network). One chart type covers what the reports need: points on
// a linear or categorical x axis and a linear y axis, each with an optional 95% interval drawn as an error
// bar, series in their own colours (optionally joined by a line), a dashed y = x reference, and vertical
// markers (change points). Every point carries a tooltip (an SVG <title>, shown on hover).
#include <optional>
#include <string>
#include <vector>

namespace infertune {

struct ChartPoint {
  double x = 0;  // a value on a linear x axis, or the index into Axis::categories
  double y = 0;
  std::optional<double> y_low, y_high;  // the interval drawn as an error bar
  std::string tooltip;
  bool emphasized = false;  // drawn larger with an outline (a Pareto-front point, a recommendation)
};

struct ChartSeries {
  std::string name;
  std::vector<ChartPoint> points;
  bool joined = false;  // a line through the best point at each x, in x order (Chart::lower_is_better)
};

struct ChartAxis {
  std::string title;
  std::vector<std::string> categories;  // non-empty: a categorical axis, points at their index
  bool from_zero = true;                // a linear axis includes 0 (throughput); false fits the data (latency)
};

struct ChartMarker {
  double x = 0;
  std::string label;
};

struct Chart {
  std::string title;
  ChartAxis x, y;
  std::vector<ChartSeries> series;
  std::vector<ChartMarker> markers;  // vertical dashed lines at these x values
  bool diagonal = false;             // the y = x line (predicted vs measured)
  bool jitter = false;               // spread points that share a category sideways so each stays visible
  bool lower_is_better = false;      // which point of an x a joined series' line goes through
  int width = 460;
  int height = 300;
};

// The chart as an <svg> element; series colours come from a fixed colour-blind-safe palette in order.
std::string render_svg_chart(const Chart& chart);

// The palette colour of series i (also used by the HTML legend and tables).
const char* series_colour(size_t i);

// "Nice" tick values covering [low, high]: 1, 2 or 5 x 10^k steps, about `count` of them.
std::vector<double> nice_ticks(double low, double high, int count);

// A number as a tick label: few digits, thousands as "12k".
std::string tick_label(double value);

}  // namespace infertune
