// The memory model (sweeps/plan/memory_model.h) against the RSS the process actually grows by when it loads
// each fixture model, creates a Context and decodes a prompt: the expected peak (weights, the KV pages the
// prompt's cells touch, compute buffers) must be within a written tolerance of the measured peak, so that a
// sweep's predictions can be trusted. Cases with a filled context check the full KV reservation (what
// --max-mem compares); the others, that unwritten cells cost nothing. Prints the table.
#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/context/context.h"
#include "engine/model/model.h"
#include "sanitizer_runtime.h"
#include "sweeps/metrics/peak_rss.h"
#include "sweeps/plan/memory_model.h"
#include "test_support.h"

namespace infertune {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

// What the model leaves out on purpose (memory_model.h): the thread pool's stacks, per-thread attention tiles
// and quantized activations, the allocator's rounding and the few KiB of tokenizer and bookkeeping
// structures. Measured on the 2-core CI VM: between -0.1 and +2.6 MiB on every case below (the most for
// BF16, whose activations are also kept rounded to bf16).
constexpr int64_t kAbsoluteSlack = 4 * kMiB;
// Relative to the prediction: page rounding of the mapped tensors, growth of vectors.
constexpr double kRelativeSlack = 0.10;

struct RssCase {
  const char* model;
  uint32_t n_ctx;
  GgmlType kv_type;
  uint32_t n_ubatch;
  uint32_t n_prompt;
  bool use_mmap;
};

constexpr RssCase kCases[] = {
    {"fixture-llama-f32", 256, GgmlType::F32, 512, 64, true},
    {"fixture-llama-f32", 8192, GgmlType::F32, 64, 96, true},
    {"fixture-llama-Q8_0", 16384, GgmlType::F16, 32, 64, true},
    {"fixture-llama-Q4_K_M", 8192, GgmlType::Q8_0, 128, 128, false},
    {"fixture-llama-BF16", 4096, GgmlType::BF16, 512, 256, true},
    {"fixture-qwen2-Q8_0", 8192, GgmlType::F16, 64, 64, true},
    {"fixture-qwen2-f32", 2048, GgmlType::Q4_0, 256, 200, false},
    {"stories260K", 8192, GgmlType::F32, 512, 64, true},
    // Filled contexts: the whole reservation is resident.
    {"fixture-llama-Q8_0", 2048, GgmlType::F32, 512, 2048, true},
    {"stories260K", 1024, GgmlType::F16, 256, 1024, false},
};

struct RssRow {
  std::string label;
  MemoryPrediction predicted;
  int64_t measured = 0;
};

// The peak RSS growth from before the model is loaded to the end of a prompt's decode.
Result<RssRow> measure(const RssCase& c) {
  const std::string path = test::fixture_path(std::string("models/") + c.model + ".gguf").string();
  auto shape = read_model_shape(path);
  if (!shape) return shape.error();
  const MemoryInputs inputs{.n_ctx = c.n_ctx,
                            .n_batch = 2048,
                            .n_ubatch = c.n_ubatch,
                            .max_decode_tokens = c.n_prompt,
                            .n_outputs = 1,
                            .type_k = c.kv_type,
                            .type_v = c.kv_type,
                            .use_mmap = c.use_mmap,
                            .kv_cells_written = c.n_prompt};
  auto predicted = predict_memory(*shape, inputs);
  if (!predicted) return predicted.error();

  malloc_trim(0);  // earlier cases' freed memory back to the system, so this one faults in its own pages
  if (Status s = reset_peak_rss(); !s) return s.error();
  const int64_t before = current_rss_bytes().value_or(0);
  {
    auto model = Model::load(path, {.use_mmap = c.use_mmap});
    if (!model) return model.error();
    auto ctx = Context::create(*model, {.n_ctx = c.n_ctx,
                                        .n_threads = 2,
                                        .n_batch = 2048,
                                        .n_ubatch = c.n_ubatch,
                                        .type_k = c.kv_type,
                                        .type_v = c.kv_type});
    if (!ctx) return ctx.error();
    std::vector<int32_t> prompt(c.n_prompt);
    for (uint32_t i = 0; i < c.n_prompt; ++i) prompt[i] = static_cast<int32_t>((i * 7 + 1) % model->config().n_vocab);
    auto logits = ctx->decode(prompt, Logits::Last);
    if (!logits) return logits.error();
  }
  const int64_t peak = peak_rss_bytes().value_or(0);
  RssRow row;
  row.label = fmt::format("{} c={} kv={} ub={} p={}{}", c.model, c.n_ctx, ggml_type_name(c.kv_type), c.n_ubatch,
                          c.n_prompt, c.use_mmap ? "" : " no-mmap");
  row.predicted = *predicted;
  row.measured = peak - before;
  return row;
}

TEST(MemoryModelRss, PredictionIsWithinToleranceOfMeasuredPeakRss) {
  INFERTUNE_SKIP_UNDER_SANITIZER("adds shadow memory to the RSS");
  if (!reset_peak_rss().ok())
    GTEST_SKIP() << "the kernel does not allow resetting the peak RSS (/proc/self/clear_refs)";
  // One unmeasured run first: the code pages of the forward pass and the allocator's per-thread arenas are
  // faulted in once per process, not per context.
  ASSERT_TRUE(measure(kCases[0]));
  std::printf("%-56s %8s %8s %8s %8s %9s %9s %7s\n", "case (MiB)", "weights", "kv", "kv_res", "compute", "expected",
              "measured", "error");
  for (const RssCase& c : kCases) {
    auto row = measure(c);
    ASSERT_TRUE(row) << c.model << ": " << row.error().message;
    const int64_t predicted = static_cast<int64_t>(row->predicted.expected_peak_rss());
    const int64_t error = row->measured - predicted;
    if (c.n_prompt == c.n_ctx) {
      EXPECT_EQ(row->predicted.kv_resident, row->predicted.kv) << row->label;
    }
    std::printf("%-56s %8.2f %8.2f %8.2f %8.2f %9.2f %9.2f %+7.2f\n", row->label.c_str(),
                double(row->predicted.weights) / kMiB, double(row->predicted.kv) / kMiB,
                double(row->predicted.kv_resident) / kMiB, double(row->predicted.compute) / kMiB,
                double(predicted) / kMiB, double(row->measured) / kMiB, double(error) / kMiB);
    const double tolerance = kAbsoluteSlack + kRelativeSlack * predicted;
    EXPECT_LE(std::abs(double(error)), tolerance)
        << row->label << ": predicted " << predicted << " B, measured " << row->measured << " B";
  }
}

}  // namespace
}  // namespace infertune
