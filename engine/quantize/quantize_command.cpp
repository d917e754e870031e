// `infertune quantize`: llama-quantize's command line over our quantizer (engine/quantize/quantize_plan.h,
// model_quantizer.h): IN.gguf [OUT.gguf] TYPE [THREADS].
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine_commands.h"
#include "engine/quantize/model_quantizer.h"
#include "engine/quantize/row_encoder.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

struct QuantizeFlags {
  std::vector<std::string> args;  // IN [OUT] TYPE [THREADS]
  bool pure = false;
  std::string output_tensor_type;
  std::string token_embedding_type;
  bool leave_output_tensor = false;
  bool allow_requantize = false;
  bool dry_run = false;
  std::string imatrix;                       // --imatrix FILE
  std::vector<std::string> include_weights;  // --include-weights NAME (repeatable)
  std::vector<std::string> exclude_weights;  // --exclude-weights NAME (repeatable)
};

struct Positionals {
  std::string input, output, type;
  unsigned threads = 0;
};

std::optional<unsigned> parse_threads(const std::string& s) {
  unsigned n = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size() || n == 0 || n > 1024) return std::nullopt;
  return n;
}

// As llama-quantize: without OUT, the output is ggml-model-TYPE.gguf beside the input.
Result<Positionals> read_positionals(const std::vector<std::string>& args) {
  if (args.size() < 2 || args.size() > 4) {
    return fail("expected IN.gguf [OUT.gguf] TYPE [THREADS], got {} arguments", args.size());
  }
  Positionals p;
  p.input = args[0];
  const bool type_second =
      args.size() == 2 || (args.size() == 3 && quantize_file_type(args[1]) && parse_threads(args[2]));
  p.type = type_second ? args[1] : args[2];
  p.output = type_second ? "" : args[1];
  const size_t threads_at = type_second ? 2 : 3;
  if (args.size() > threads_at) {
    const auto threads = parse_threads(args[threads_at]);
    if (!threads) return fail("THREADS '{}': must be a whole number from 1 to 1024", args[threads_at]);
    p.threads = *threads;
  }
  if (p.output.empty()) {
    p.output = (std::filesystem::path(p.input).parent_path() / fmt::format("ggml-model-{}.gguf", p.type)).string();
  }
  return p;
}

Result<std::optional<GgmlType>> override_type(const std::string& flag, const std::string& name) {
  if (name.empty()) return std::optional<GgmlType>{};
  const auto type = ggml_type_from_name(name);
  if (!type || !has_reference_codec(*type)) return fail("{} '{}': not a type the quantizer writes", flag, name);
  return std::optional<GgmlType>{*type};
}

Result<QuantizeOptions> options_from(const QuantizeFlags& flags, const Positionals& p) {
  const auto file_type = quantize_file_type(p.type);
  if (!file_type)
    return fail("TYPE '{}' is unknown (types: {}; or their LLAMA_FTYPE numbers)", p.type, quantize_type_names());
  QuantizeOptions o;
  o.file_type = *file_type;
  o.pure = flags.pure;
  auto output = override_type("--output-tensor-type", flags.output_tensor_type);
  if (!output) return output.error();
  auto embedding = override_type("--token-embedding-type", flags.token_embedding_type);
  if (!embedding) return embedding.error();
  o.output_tensor_type = *output;
  o.token_embedding_type = *embedding;
  o.leave_output_tensor = flags.leave_output_tensor;
  o.allow_requantize = flags.allow_requantize;
  o.threads = p.threads;
  return o;
}

// --imatrix with --include-weights / --exclude-weights applied. Null without --imatrix.
Result<std::unique_ptr<ImportanceFile>> importance_from(const QuantizeFlags& flags) {
  if (!flags.include_weights.empty() && !flags.exclude_weights.empty()) {
    return fail("--include-weights and --exclude-weights cannot be used together");
  }
  if (flags.imatrix.empty()) {
    if (!flags.include_weights.empty() || !flags.exclude_weights.empty()) {
      return fail("--include-weights / --exclude-weights choose entries of an importance matrix: give --imatrix FILE");
    }
    return std::unique_ptr<ImportanceFile>{};
  }
  auto file = load_importance_file(flags.imatrix);
  if (!file) return file.error();
  const size_t loaded = file->entries.size();
  if (Status s = select_importance(*file, flags.include_weights, flags.exclude_weights); !s) return s.error();
  fmt::print(stderr, "quantize: importance matrix {}: {} entries{}, computed on {} chunks{}\n", file->path, loaded,
             loaded == file->entries.size() ? std::string() : fmt::format(" ({} used)", file->entries.size()),
             file->chunk_count, file->datasets.empty() ? std::string() : fmt::format(" of {}", file->datasets[0]));
  if (file->entries.empty()) {
    fmt::print(stderr, "quantize: warning: no importance matrix entries left; quantizing without one\n");
  }
  return std::make_unique<ImportanceFile>(std::move(*file));
}

std::string dims_text(const std::vector<uint64_t>& dims) {
  std::string text;
  for (size_t i = 0; i < 4; ++i) text += fmt::format("{}{:5}", i ? ", " : "", i < dims.size() ? dims[i] : 1);
  return text;
}

double mib(uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

// llama-quantize's line per tensor.
void print_tensor(const TensorPlan& p, uint64_t out_bytes, size_t index, size_t total, bool dry_run) {
  const GgufTensorInfo& t = *p.source;
  std::string what = p.convert() ? fmt::format("{} {} .. size = {:8.2f} MiB -> {:8.2f} MiB",
                                               dry_run ? "would convert to" : "converting to", ggml_type_name(p.type),
                                               mib(t.n_bytes), mib(out_bytes))
                                 : fmt::format("size = {:8.3f} MiB", mib(t.n_bytes));
  fmt::print(stderr, "[{:4}/{:4}] {:>36} - [{}], type = {:>6}, {}\n", index + 1, total, t.name, dims_text(t.dims),
             ggml_type_name(t.type), what);
}

int run_quantize(const QuantizeFlags& flags) {
  auto positionals = read_positionals(flags.args);
  if (!positionals) return report_error("quantize", positionals.error().message);
  auto options = options_from(flags, *positionals);
  if (!options) return report_error("quantize", options.error().message);
  auto importance = importance_from(flags);
  if (!importance) return report_error("quantize", importance.error().message);
  options->importance = importance->get();
  auto input = GgufFile::open(positionals->input);
  if (!input) return report_error("quantize", input.error().message);
  auto plan = plan_quantization(*input, *options);
  if (!plan) return report_error("quantize", plan.error().message);
  auto layout = quantized_layout(*input, *plan, *options);
  if (!layout) return report_error("quantize", layout.error().message);
  const auto& out_tensors = layout->tensors();
  std::vector<std::string> without_importance;  // converted to a type that reads a matrix, but no entry
  for (const TensorPlan& p : *plan) {
    if (p.convert() && ggml_type_traits(p.source->type).quantized) {
      fmt::print(stderr, "quantize: warning: requantizing {} from {}: the result is worse than from the original\n",
                 p.source->name, ggml_type_name(p.source->type));
    }
    if (p.missing_importance && uses_importance(p.type)) without_importance.push_back(p.source->name);
  }
  if (!without_importance.empty()) {
    const size_t shown = std::min<size_t>(without_importance.size(), 3);
    std::string names;
    for (size_t i = 0; i < shown; ++i) names += (i ? ", " : "") + without_importance[i];
    fmt::print(stderr, "quantize: no importance matrix entry for {} tensor(s) ({}{}): quantized without one\n",
               without_importance.size(), names, shown < without_importance.size() ? ", ..." : "");
  }
  uint64_t in_bytes = 0, out_bytes = 0;
  for (size_t i = 0; i < plan->size(); ++i) {
    in_bytes += (*plan)[i].source->n_bytes;
    out_bytes += out_tensors[i].n_bytes;
  }
  if (flags.dry_run) {
    for (size_t i = 0; i < plan->size(); ++i) print_tensor((*plan)[i], out_tensors[i].n_bytes, i, plan->size(), true);
  } else {
    fmt::print(stderr, "quantize: {} -> {} as {} ({} threads)\n", positionals->input, positionals->output,
               options->file_type.name, encoder_threads(options->threads));
    const auto start = std::chrono::steady_clock::now();
    const auto progress = [&](const TensorPlan& p, size_t index, size_t total) {
      print_tensor(p, out_tensors[index].n_bytes, index, total, false);
    };
    auto summary = quantize_model(*input, *plan, *options, positionals->output, progress);
    if (!summary) return report_error("quantize", summary.error().message);
    fmt::print(stderr, "quantize: {} tensors converted, {} copied in {:.2f} s\n", summary->converted, summary->copied,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  fmt::print(stderr, "quantize: model size = {:.2f} MiB, quantized size = {:.2f} MiB{}\n", mib(in_bytes),
             mib(out_bytes), flags.dry_run ? " (dry run: nothing written)" : "");
  return 0;
}

}  // namespace

void add_quantize_command(Subcommands& commands) {
  auto flags = std::make_shared<QuantizeFlags>();
  CLI::App* app =
      commands.add("quantize", "Quantize a GGUF model as llama-quantize does: IN.gguf [OUT.gguf] TYPE [THREADS]",
                   [flags] { return run_quantize(*flags); });
  app->footer("TYPE: " + quantize_type_names() +
              " (any case; Q3_K, Q4_K, Q5_K are the _M mixes; or the LLAMA_FTYPE number). Without OUT the output is "
              "ggml-model-TYPE.gguf beside the input.");
  app->add_option("args", flags->args, "IN.gguf [OUT.gguf] TYPE [THREADS]")->required();
  app->add_flag("--pure", flags->pure, "Every weight in TYPE's base type: no per-tensor mix");
  app->add_option("--output-tensor-type", flags->output_tensor_type, "Type of output.weight (e.g. q8_0, f16)");
  app->add_option("--token-embedding-type", flags->token_embedding_type, "Type of token_embd.weight");
  app->add_flag("--leave-output-tensor", flags->leave_output_tensor, "Copy output.weight as it is");
  app->add_flag("--allow-requantize", flags->allow_requantize,
                "Quantize tensors that are already quantized (the result is worse than from F16/BF16/F32)");
  app->add_flag("--dry-run", flags->dry_run, "Print each tensor's type and the sizes; write nothing");
  app->add_option("--imatrix", flags->imatrix,
                  "Importance matrix (from `infertune imatrix` or llama-imatrix, GGUF or .dat): the quantizers fit "
                  "each block to the input columns that matter most");
  app->add_option("--include-weights", flags->include_weights,
                  "Use the matrix only for tensors whose name contains NAME (repeatable)")
      ->allow_extra_args(false);
  app->add_option("--exclude-weights", flags->exclude_weights,
                  "Do not use the matrix for tensors whose name contains NAME (repeatable)")
      ->allow_extra_args(false);
}

}  // namespace infertune
