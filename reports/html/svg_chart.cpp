#include "reports/html/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>

#include "reports/html/html_text.h"

namespace infertune {
namespace {

// Okabe and Ito's colour-blind-safe palette (without yellow, too pale on white), then darker variants.
constexpr std::array kPalette{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#56B4E9", "#E69F00",
                              "#000000", "#7f3c8d", "#11a579", "#3969ac", "#f2b701", "#e73f74"};

struct Box {
  double left = 56, right = 12, top = 30, bottom = 44;  // margins around the plot area, in pixels
};

struct Range {
  double low = std::numeric_limits<double>::infinity();
  double high = -std::numeric_limits<double>::infinity();
  void add(double v) {
    if (!std::isfinite(v)) return;
    low = std::min(low, v);
    high = std::max(high, v);
  }
  bool empty() const { return low > high; }
};

// Maps data values to pixels along one axis.
struct Scale {
  double data_low = 0, data_high = 1, pixel_low = 0, pixel_high = 1;
  double operator()(double v) const {
    const double span = data_high - data_low;
    const double t = span > 0 ? (v - data_low) / span : 0.5;
    return pixel_low + t * (pixel_high - pixel_low);
  }
  double clamped(double v) const { return (*this)(std::clamp(v, data_low, data_high)); }
};

// A quantity that cannot be negative (tokens/s, memory) keeps its axis at 0 even when a wide interval of a
// few repetitions reaches below it; such bars are cut at the axis.
Range y_range(const Chart& chart) {
  Range r;
  bool negative_values = false;
  for (const ChartSeries& s : chart.series) {
    for (const ChartPoint& p : s.points) {
      r.add(p.y);
      negative_values = negative_values || p.y < 0;
      if (p.y_low) r.add(*p.y_low);
      if (p.y_high) r.add(*p.y_high);
      if (chart.diagonal) r.add(p.x);
    }
  }
  if (chart.y.from_zero) {
    r.add(0);
    if (!negative_values) r.low = 0;
  }
  return r;
}

Range x_range(const Chart& chart) {
  Range r;
  if (!chart.x.categories.empty()) {
    r.add(-0.5);
    r.add(static_cast<double>(chart.x.categories.size()) - 0.5);
    return r;
  }
  for (const ChartSeries& s : chart.series) {
    for (const ChartPoint& p : s.points) {
      r.add(p.x);
      if (chart.diagonal) r.add(p.y);
    }
  }
  for (const ChartMarker& m : chart.markers) r.add(m.x);
  if (chart.x.from_zero) r.add(0);
  return r;
}

// Widens a range to its outer ticks (a degenerate one by 10% around its value).
std::vector<double> widen_to_ticks(Range& r, int count) {
  if (r.empty()) r = {0, 1};
  if (r.low == r.high) {
    const double pad = r.low == 0 ? 1 : std::abs(r.low) * 0.1;
    r.low -= pad;
    r.high += pad;
  }
  std::vector<double> ticks = nice_ticks(r.low, r.high, count);
  r.low = std::min(r.low, ticks.front());
  r.high = std::max(r.high, ticks.back());
  return ticks;
}

// Small deterministic sideways offsets for points sharing a category: -w..+w in order of arrival.
double jitter_offset(size_t index_in_category, size_t count_in_category) {
  if (count_in_category <= 1) return 0;
  const double width = 0.6;
  return -width / 2 + width * static_cast<double>(index_in_category) / static_cast<double>(count_in_category - 1);
}

size_t common_prefix(const std::vector<std::string>& texts) {
  size_t n = texts.front().size();
  for (const std::string& t : texts) {
    n = std::min(n, t.size());
    while (n > 0 && t.compare(0, n, texts.front(), 0, n) != 0) --n;
  }
  return n;
}

// Category labels short enough for the axis and still telling apart: a prefix and a suffix that every
// label shares ("synthetic-llama-1b-" ... ".gguf") are cut, then anything long is cut in the middle.
std::vector<std::string> category_labels(const std::vector<std::string>& categories) {
  constexpr size_t kLongest = 16;
  std::vector<std::string> labels = categories;
  if (labels.size() >= 2) {
    size_t prefix = common_prefix(labels);
    std::vector<std::string> reversed;
    for (const std::string& l : labels) reversed.emplace_back(l.rbegin(), l.rend());
    size_t suffix = common_prefix(reversed);
    const size_t shortest = std::ranges::min_element(labels, {}, &std::string::size)->size();
    // Cut at a separator only, so "q4_0" / "q8_0" keep their "q".
    const auto separator = [](char c) { return c == '-' || c == '_' || c == '.' || c == ' ' || c == '/'; };
    const std::string& first = labels.front();
    while (prefix > 0 && !separator(first[prefix - 1])) --prefix;
    while (suffix > 0 && !separator(first[first.size() - suffix])) --suffix;
    if (prefix + suffix >= shortest) suffix = 0;
    if (prefix + suffix >= shortest) prefix = 0;
    if (prefix < 4) prefix = 0;  // "1", "16": nothing worth cutting
    if (suffix < 4) suffix = 0;
    for (std::string& l : labels) l = (prefix ? "…" : "") + l.substr(prefix, l.size() - prefix - suffix);
  }
  for (std::string& l : labels) {
    if (l.size() > kLongest) l = l.substr(0, kLongest / 2 - 1) + "…" + l.substr(l.size() - kLongest / 2);
  }
  return labels;
}

std::string axis_lines(const Chart& chart, const Scale& xs, const Scale& ys, const std::vector<double>& y_ticks,
                       const std::vector<double>& x_ticks, const Box& box) {
  std::string out;
  const double x0 = box.left, x1 = chart.width - box.right, y0 = chart.height - box.bottom, y1 = box.top;
  for (double t : y_ticks) {
    const double y = ys(t);
    out += fmt::format(R"(<line class="grid" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)", x0, y, x1, y);
    out += fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)", x0 - 4, y + 3,
                       tick_label(t));
  }
  if (!chart.x.categories.empty()) {
    const std::vector<std::string> labels = category_labels(chart.x.categories);
    for (size_t i = 0; i < labels.size(); ++i) {
      const std::string& label = labels[i];
      out += fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)",
                         xs(static_cast<double>(i)), y0 + 14, html_escape(label));
    }
  } else {
    for (double t : x_ticks) {
      out += fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)", xs(t), y0 + 14,
                         tick_label(t));
    }
  }
  out += fmt::format(R"(<line class="axis" x1="{0:.1f}" y1="{1:.1f}" x2="{2:.1f}" y2="{1:.1f}"/>)", x0, y0, x1);
  out += fmt::format(R"(<line class="axis" x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}"/>)", x0, y0, y1);
  out += fmt::format(R"(<text class="axis-title" x="{:.1f}" y="{}" text-anchor="middle">{}</text>)", (x0 + x1) / 2,
                     chart.height - 8, html_escape(chart.x.title));
  out += fmt::format(R"~(<text class="axis-title" transform="translate(12 {:.1f}) rotate(-90)" text-anchor="middle">{}</text>)~",
                     (y0 + y1) / 2, html_escape(chart.y.title));
  return out;
}

std::string point_marks(const ChartPoint& p, double x, const Scale& ys, const char* colour) {
  std::string out = "<g>";
  if (p.y_low && p.y_high) {
    const double lo = ys.clamped(*p.y_low), hi = ys.clamped(*p.y_high);
    out += fmt::format(R"(<line stroke="{0}" x1="{1:.1f}" y1="{2:.1f}" x2="{1:.1f}" y2="{3:.1f}"/>)", colour, x, lo, hi);
    out += fmt::format(R"(<line stroke="{0}" x1="{1:.1f}" y1="{2:.1f}" x2="{3:.1f}" y2="{2:.1f}"/>)", colour, x - 3,
                       lo, x + 3);
    out += fmt::format(R"(<line stroke="{0}" x1="{1:.1f}" y1="{2:.1f}" x2="{3:.1f}" y2="{2:.1f}"/>)", colour, x - 3,
                       hi, x + 3);
  }
  out += p.emphasized ? fmt::format(R"(<circle class="emph" cx="{:.1f}" cy="{:.1f}" r="5.5" fill="{}"/>)", x, ys(p.y),
                                    colour)
                      : fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3.2" fill="{}"/>)", x, ys(p.y), colour);
  if (!p.tooltip.empty()) out += "<title>" + html_escape(p.tooltip) + "</title>";
  return out + "</g>";
}

std::string series_marks(const Chart& chart, const Scale& xs, const Scale& ys) {
  // How many points share each category (for jitter), counted over all series.
  std::vector<size_t> per_category(chart.x.categories.size(), 0), seen(chart.x.categories.size(), 0);
  const auto category = [&](const ChartPoint& p) { return static_cast<size_t>(std::lround(p.x)); };
  const auto in_range = [&](size_t c) { return c < per_category.size(); };
  if (chart.jitter) {
    for (const ChartSeries& s : chart.series)
      for (const ChartPoint& p : s.points)
        if (in_range(category(p))) ++per_category[category(p)];
  }
  std::string out;
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const ChartSeries& s = chart.series[i];
    const char* colour = series_colour(i);
    // x (data) -> where the best point at that x was drawn (pixels, after jitter).
    std::map<double, std::pair<double, double>> line;
    std::string marks;
    for (const ChartPoint& p : s.points) {
      double x = p.x;
      if (chart.jitter && in_range(category(p))) {
        const size_t c = category(p);
        x += jitter_offset(seen[c]++, per_category[c]);
      }
      marks += point_marks(p, xs(x), ys, colour);
      // Pixel y grows downwards: the highest value has the smallest pixel y.
      const std::pair<double, double> drawn{xs(x), ys(p.y)};
      auto [it, added] = line.emplace(p.x, drawn);
      const bool better = chart.lower_is_better ? drawn.second > it->second.second : drawn.second < it->second.second;
      if (!added && better) it->second = drawn;
    }
    if (s.joined && line.size() > 1) {
      std::string path;
      for (const auto& [x, at] : line)
        path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", at.first, at.second);
      out += fmt::format(R"(<path class="series-line" stroke="{}" d="{}"/>)", colour, path);
    }
    out += fmt::format(R"(<g class="series" data-series="{}">{}</g>)", html_escape(s.name), marks);
  }
  return out;
}

std::string legend(const Chart& chart) {
  if (chart.series.size() < 2) return "";
  std::string out;
  double x = 60;
  for (size_t i = 0; i < chart.series.size() && i < kPalette.size(); ++i) {
    std::string name = chart.series[i].name;
    if (name.size() > 28) name = name.substr(0, 27) + "…";
    out += fmt::format(R"(<circle cx="{:.1f}" cy="{}" r="4" fill="{}"/>)", x, 23, series_colour(i));
    out += fmt::format(R"(<text class="legend" x="{:.1f}" y="{}">{}</text>)", x + 7, 26, html_escape(name));
    x += 18 + 6.2 * static_cast<double>(name.size());
  }
  return out;
}

}  // namespace

const char* series_colour(size_t i) { return kPalette[i % kPalette.size()]; }

std::vector<double> nice_ticks(double low, double high, int count) {
  if (!(high > low) || count < 1) return {low};
  const double raw_step = (high - low) / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw_step)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw_step) break;
  }
  // Whole multiples of the step, counted as integers so rounding cannot drop the last tick.
  const double first = std::floor(low / step + 1e-9), last = std::ceil(high / step - 1e-9);
  std::vector<double> ticks;
  for (double k = first; k <= last && ticks.size() < 50; ++k) ticks.push_back(k == 0 ? 0 : k * step);
  return ticks;
}

std::string tick_label(double value) {
  const double a = std::abs(value);
  if (a >= 1e6) return fmt::format("{:g}M", value / 1e6);
  if (a >= 1e4) return fmt::format("{:g}k", value / 1e3);
  return fmt::format("{:g}", std::round(value * 1000) / 1000);
}

std::string render_svg_chart(const Chart& chart) {
  Box box;
  if (chart.series.size() > 1) box.top = 38;
  Range xr = x_range(chart), yr = y_range(chart);
  const std::vector<double> y_ticks = widen_to_ticks(yr, 5);
  std::vector<double> x_ticks;
  if (chart.x.categories.empty()) x_ticks = widen_to_ticks(xr, 5);
  const Scale xs{xr.low, xr.high, box.left, chart.width - box.right};
  const Scale ys{yr.low, yr.high, chart.height - box.bottom, box.top};

  std::string out = fmt::format(
      R"(<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" role="img">)",
      chart.width, chart.height);
  out += "<title>" + html_escape(chart.title) + "</title>";
  out += fmt::format(R"(<text class="chart-title" x="{}" y="14">{}</text>)", box.left, html_escape(chart.title));
  out += legend(chart);
  out += axis_lines(chart, xs, ys, y_ticks, x_ticks, box);
  if (chart.diagonal) {
    const double lo = std::max(xr.low, yr.low), hi = std::min(xr.high, yr.high);
    out += fmt::format(R"(<line class="diagonal" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"><title>y = x</title></line>)",
                       xs(lo), ys(lo), xs(hi), ys(hi));
  }
  for (const ChartMarker& m : chart.markers) {
    out += fmt::format(R"(<line class="marker" x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}"><title>{3}</title></line>)",
                       xs(m.x), ys(yr.low), ys(yr.high), html_escape(m.label));
  }
  out += series_marks(chart, xs, ys);
  return out + "</svg>";
}

}  // namespace infertune
