// md: llama-bench's table. Always: model, size, params, backend, threads, then the test parameters that
// were given more than one value or a value other than the default, then infertune's kernel and gemm
// (float-weight backend, "-" for none) columns, the test, t/s as mean ± sample stddev, and the roofline % and GOP/s of
// roofline.h. An error row shows its message in the t/s column.
#include <fmt/format.h>

#include <functional>
#include <string>
#include <vector>

#include "bench/llama_bench/printer.h"
#include "bench/llama_bench/roofline.h"
#include "engine/settings/settings_table.h"

namespace infertune {
namespace {

struct Column {
  std::string name;
  int width;  // negative: left-aligned
  std::function<std::string(const BenchResult&)> value;
};

// Display width of UTF-8 text: code points, not bytes ("±" is one column).
size_t display_width(const std::string& text) {
  size_t width = 0;
  for (unsigned char c : text) width += (c & 0xC0) != 0x80;
  return width;
}

std::string pad(const std::string& text, int width) {
  const size_t target = static_cast<size_t>(width < 0 ? -width : width);
  const size_t have = display_width(text);
  if (have >= target) return text;
  const std::string fill(target - have, ' ');
  return width < 0 ? text + fill : fill + text;
}

// A '|' would end the cell early; newlines would end the row.
std::string cell_text(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else {
      out += (c == '\n' ? ' ' : c);
    }
  }
  return out;
}

std::string size_text(uint64_t bytes) {
  if (bytes < (1ull << 30)) return fmt::format("{:.2f} MiB", double(bytes) / (1 << 20));
  return fmt::format("{:.2f} GiB", double(bytes) / (1ull << 30));
}

std::string params_text(uint64_t n) {
  if (n < 1'000'000'000) return fmt::format("{:.2f} M", double(n) / 1e6);
  return fmt::format("{:.2f} B", double(n) / 1e9);
}

struct ColumnHead {
  const char* name;
  int width;
};

// A column for setting `key` when it was given more than one value or one other than its default.
void add_setting_column(const BenchParams& params, const char* key, ColumnHead head, std::vector<Column>& columns) {
  const std::vector<std::string>& given = params.values(key);
  if (given.size() == 1 && given.front() == find_setting(key)->default_value) return;
  columns.push_back({head.name, head.width, [key](const BenchResult& r) { return r.test.value(key); }});
}

class MarkdownPrinter : public ResultPrinter {
 public:
  MarkdownPrinter(std::FILE* out, const BenchParams& params, const RunInfo& run)
      : ResultPrinter(out), run_(run), columns_(choose_columns(params)) {}

  void header() override {
    std::string names = "|";
    std::string rule = "|";
    for (const Column& c : columns_) {
      names += fmt::format(" {} |", pad(c.name, c.width));
      const size_t w = static_cast<size_t>(c.width < 0 ? -c.width : c.width);
      rule += fmt::format(" {}{} |", std::string(w - 1, '-'), c.width > 0 ? ':' : '-');
    }
    fmt::print(out_, "{}\n{}\n", names, rule);
  }

  void row(const BenchResult& result) override {
    std::string line = "|";
    for (const Column& c : columns_) line += fmt::format(" {} |", pad(cell_text(c.value(result)), c.width));
    fmt::print(out_, "{}\n", line);
    std::fflush(out_);
  }

  void footer() override { fmt::print(out_, "\nbuild: {}\n", run_.build_commit); }

 private:
  std::vector<Column> choose_columns(const BenchParams& p) const {
    const RunInfo& run = run_;
    std::vector<Column> c;
    c.push_back({"model", -30, [](const BenchResult& r) { return r.model ? r.model->type : r.test.model; }});
    c.push_back({"size", 10, [](const BenchResult& r) { return r.model ? size_text(r.model->size_bytes) : ""; }});
    c.push_back({"params", 10, [](const BenchResult& r) { return r.model ? params_text(r.model->n_params) : ""; }});
    c.push_back({"backend", -10, [&run](const BenchResult&) { return run.backends; }});
    add_setting_column(p, "n_gpu_layers", {"ngl", 3}, c);
    add_setting_column(p, "split_mode", {"sm", 5}, c);
    add_setting_column(p, "main_gpu", {"mg", 2}, c);
    c.push_back({"threads", 7, [](const BenchResult& r) {
                   if (r.threads_used > 0) return std::to_string(r.threads_used);
                   return r.test.settings.placement.threads > 0 ? std::to_string(r.test.settings.placement.threads)
                                                                : std::string();
                 }});
    add_setting_column(p, "cpu_mask", {"cpu_mask", -10}, c);
    add_setting_column(p, "cpu_strict", {"cpu_strict", 10}, c);
    add_setting_column(p, "poll", {"poll", 10}, c);
    add_setting_column(p, "batch_size", {"n_batch", 7}, c);
    add_setting_column(p, "ubatch_size", {"n_ubatch", 8}, c);
    add_setting_column(p, "cache_type_k", {"type_k", 6}, c);
    add_setting_column(p, "cache_type_v", {"type_v", 6}, c);
    add_setting_column(p, "flash_attn", {"fa", 4}, c);
    add_setting_column(p, "mmap", {"mmap", 4}, c);
    add_setting_column(p, "repack", {"repack", 6}, c);
    add_setting_column(p, "tensor_split", {"ts", -12}, c);
    c.push_back({"kernel", -10, [](const BenchResult& r) { return r.model ? r.model->kernel : ""; }});
    c.push_back({"gemm", -23, [](const BenchResult& r) { return r.gemm.empty() ? std::string("-") : r.gemm; }});
    c.push_back({"test", 15, [](const BenchResult& r) { return test_name(r.test); }});
    c.push_back({"t/s", 20, [](const BenchResult& r) {
                   if (!r.ok()) return fmt::format("error: {}", r.error);
                   return fmt::format("{:.2f} ± {:.2f}", avg_ts(r), stddev_ts(r));
                 }});
    c.push_back({"roofline %", 10, [&run](const BenchResult& r) {
                   auto pct = roofline_percent(r, run.read_bandwidth);
                   return pct ? fmt::format("{:.1f}", *pct) : std::string();
                 }});
    c.push_back({"GOP/s", 8, [](const BenchResult& r) {
                   auto gops = achieved_gops(r);
                   return gops ? fmt::format("{:.1f}", *gops) : std::string();
                 }});
    return c;
  }

  const RunInfo& run_;
  std::vector<Column> columns_;
};

}  // namespace

std::unique_ptr<ResultPrinter> make_markdown_printer(std::FILE* out, const BenchParams& params, const RunInfo& run) {
  return std::make_unique<MarkdownPrinter>(out, params, run);
}

}  // namespace infertune
