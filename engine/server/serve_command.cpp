// `infertune serve`: an OpenAI-compatible HTTP server over one model, with llama-server's flags. The port is
// bound first, so that /health answers 503 while the model loads; then the model, the context (-c cells
// shared by -np slots) and the serving loop start, and the routes answer. SIGTERM or SIGINT drains: new
// requests get 503, the running and queued ones finish (up to --drain-timeout seconds, then they are
// cancelled), and the process exits 0.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <pthread.h>
#include <chrono>
#include <csignal>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "engine/cli/flag_ranges.h"
#include "engine/embedding/embedder.h"
#include "engine/embedding/pooling.h"
#include "engine/engine_commands.h"
#include "engine/grammar/grammar_flags.h"
#include "engine/grammar/grammar_vocabulary.h"
#include "engine/model/model.h"
#include "engine/sampling/sampling_flags.h"
#include "engine/server/http_server.h"
#include "engine/server/llama_server_flags.h"
#include "engine/server/serving_loop.h"
#include "engine/settings/make_context.h"
#include "engine/settings/setting_flags.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/vocab.h"

namespace infertune {
namespace {

constexpr const char* kCommand = "serve";
constexpr uint32_t kDefaultPrefillChunk = 0;  // chunking costs CPU prompt speed: measured in docs/serving.md

struct ServeFlags {
  std::string model;
  std::string host = "127.0.0.1";
  int port = 8080;
  std::vector<std::string> api_keys;
  std::string api_key_file;
  std::string alias;
  bool metrics = false;
  bool slots = true;
  bool log_disable = false;
  int timeout_s = 600;
  int threads_http = 0;  // 0: -np + --queue-size + 4
  uint32_t queue_size = 16;
  int drain_timeout_s = 30;
  int32_t n_predict = -1;
  uint32_t prefill_chunk = kDefaultPrefillChunk;
  double gather_ms = 2;
  std::string chat_template;
  std::string chat_template_file;
  bool mlock = false;
  EngineSettings settings;
  SamplingParams sampling;
  GrammarFlags grammar;  // the constraint of requests that bring none
  bool embeddings = false;
  std::string pooling;                    // empty: the model's
  std::string reasoning_format = "auto";  // --reasoning-format: what a chat reply's <think> part becomes
  std::string chat_template_kwargs;       // --chat-template-kwargs: JSON, the default of requests' own
  ForeignFlagText llama_server;
};

// The server's own lines on stderr (not its errors), silenced by --log-disable.
template <class... Args>
void log_line(const ServeFlags& flags, fmt::format_string<Args...> format, Args&&... args) {
  if (flags.log_disable) return;
  fmt::print(stderr, "serve: {}\n", fmt::format(format, std::forward<Args>(args)...));
}

LoopLimits loop_limits(const ServeFlags& flags) {
  LoopLimits limits;
  limits.max_waiting = flags.queue_size;
  limits.gather = std::chrono::microseconds(static_cast<int64_t>(flags.gather_ms * 1000));
  return limits;
}

Result<std::vector<std::string>> read_api_keys(const ServeFlags& flags) {
  std::vector<std::string> keys;
  for (const std::string& k : flags.api_keys) {
    if (k.empty()) return fail("--api-key: an empty key");
    keys.push_back(k);
  }
  if (flags.api_key_file.empty()) return keys;
  std::ifstream in(flags.api_key_file);
  if (!in) return fail("--api-key-file {}: cannot be read", flags.api_key_file);
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty() && line[0] != '#') keys.push_back(line);
  }
  if (keys.empty()) return fail("--api-key-file {}: no key in it (one per line)", flags.api_key_file);
  return keys;
}

void choose_chat_template(const ServeFlags& flags, const Model& model, ServedModel& served) {
  if (!flags.chat_template.empty()) {
    served.chat_template = *ChatTemplate::from_name(flags.chat_template);  // checked while parsing
    return;
  }
  if (!flags.chat_template_file.empty()) {
    std::ifstream in(flags.chat_template_file);
    const std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    served.props.chat_template_source = source;
    auto found = ChatTemplate::from_jinja(source);
    if (found) {
      served.chat_template = *found;
    } else {
      served.chat_template_error = flags.chat_template_file + ": " + found.error().message;
    }
    return;
  }
  const GgufValue* value = model.file().find("tokenizer.chat_template");
  const auto* source = value ? std::get_if<std::string>(&value->storage) : nullptr;
  if (!source) {
    served.chat_template = ChatTemplate::from_vocabulary(
        [&](std::string_view text) { return served.tokenizer->vocab().find(text).has_value(); });
    if (served.chat_template) {
      log_line(flags,
               "the model has no chat template; its vocabulary has {}: chat uses the {} family (--chat-template "
               "chooses another)",
               served.chat_template->turn_marker(), served.chat_template->name());
      return;
    }
    served.chat_template_error =
        "the model has no chat template (tokenizer.chat_template); start the server with --chat-template NAME (" +
        ChatTemplate::names() + ") or use /v1/completions";
    return;
  }
  served.props.chat_template_source = *source;
  auto found = ChatTemplate::from_jinja(*source);
  if (found) {
    served.chat_template = *found;
  } else {
    served.chat_template_error = found.error().message;
  }
}

std::string default_alias(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string token_text(const Vocab& vocab, std::optional<int32_t> id) {
  return id && vocab.contains(*id) ? vocab.text(*id) : std::string();
}

// What GET /props says of the model beyond the request limits (the template source is set by choose_chat_template;
// the alias and the endpoints come from the server's HttpOptions).
void describe_for_props(const ServeFlags& flags, uint32_t n_slots, const Tokenizer& tokenizer, ServedModel& served) {
  ServerProps& props = served.props;
  props.total_slots = n_slots;
  props.model_path = flags.model;
  props.chat_template_family = served.chat_template ? std::string(served.chat_template->name()) : "";
  props.bos_token = token_text(tokenizer.vocab(), tokenizer.vocab().special().bos);
  props.eos_token = token_text(tokenizer.vocab(), tokenizer.vocab().special().eos);
}

// SIGTERM and SIGINT go to one thread (sigwait), blocked everywhere else: every thread started after this
// inherits the mask.
sigset_t block_stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);  // a client that went away is a failed write, not the end of the process
  return set;
}

struct Running {
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
  PlacedContext placed;
  std::unique_ptr<Context> embedding_context;  // --embeddings: on the same model and threads
  std::unique_ptr<ServingLoop> loop;
  uint32_t n_slots = 0;  // the scheduler's (-np)
};

// --chat-template-kwargs' options (the defaults where the flag is absent or does not name them).
Result<ChatRenderOptions> server_template_options(const std::string& kwargs_json) {
  if (kwargs_json.empty()) return ChatRenderOptions{};
  const auto kwargs = nlohmann::json::parse(kwargs_json, nullptr, false);
  if (kwargs.is_discarded()) return fail("--chat-template-kwargs: not JSON: {}", kwargs_json);
  return parse_chat_template_kwargs(kwargs, "--chat-template-kwargs", {});
}

Result<Pooling> serve_pooling(const ServeFlags& flags, const Model& model) {
  return flags.pooling.empty() ? model_pooling(model.config()) : parse_pooling(flags.pooling);
}

// --embeddings: a second context on the model and the serving context's threads, which keeps embeddings. Its
// cells bound an input's length: -b of them (an input is one logical batch, as llama-server's must fit one), and
// as many sequences as short inputs can share a batch. It runs on the CPU: a GPU copy of the weights of its own
// would double their device memory.
ContextParams embedding_context_params(ContextParams p) {
  if (p.n_batch == 0) p.n_batch = kDefaultBatch;
  p.embeddings = true;
  p.n_ctx = p.n_batch;
  p.n_seq_max = std::min<uint32_t>(kMaxSequences, p.n_batch);
  return p;
}

Result<std::unique_ptr<Context>> embedding_context(const Model& model, const Context& serving) {
  ContextParams p = embedding_context_params(serving.params());
  p.n_gpu_layers = 0;
  p.gpu_shares.clear();
  p.gpu_weights = nullptr;
  auto ctx = Context::create(model, p);
  if (!ctx) return fail("--embeddings: {}", ctx.error().message);
  return std::make_unique<Context>(std::move(*ctx));
}

Result<Running> load(const ServeFlags& flags, ServerMetrics& metrics, ServedModel& served) {
  auto grammar = grammar_from_flags(flags.grammar);  // before the load: a bad grammar fails fast
  if (!grammar) return grammar.error();
  auto model = Model::load(
      flags.model, {.use_mmap = flags.settings.use_mmap, .mlock = flags.mlock, .repack = flags.settings.repack});
  if (!model) return model.error();
  for (const std::string& w : model->warnings()) log_line(flags, "warning: {}", w);
  Running r;
  r.model = std::make_unique<Model>(std::move(*model));
  auto tokenizer = Tokenizer::from_gguf(r.model->file());
  if (!tokenizer) return fail("the server needs the model's tokenizer: {}", tokenizer.error().message);
  r.tokenizer = std::make_unique<Tokenizer>(std::move(*tokenizer));
  // A bidirectional model (attention.causal = false) gives embeddings only: its one context keeps embeddings, the
  // scheduler over it never runs (completions are refused), and the embedding work uses it.
  const bool bidirectional = !r.model->config().causal_attention;
  if (bidirectional && !flags.embeddings) {
    return fail(
        "{}: the model's attention is bidirectional ({}.attention.causal = false): it computes embeddings, "
        "not text; start the server with --embeddings",
        flags.model, model_arch_name(r.model->config().arch));
  }
  EngineSettings settings = flags.settings;
  if (bidirectional) settings.context = embedding_context_params(settings.context);
  auto placed = make_context(*r.model, settings);
  if (!placed) return placed.error();
  for (const std::string& w : placed->warnings) log_line(flags, "warning: {}", w);
  r.placed = std::move(*placed);
  Context& ctx = *r.placed.context;
  const uint32_t n_parallel = std::min(ctx.n_seq_max(), std::max<uint32_t>(1, flags.settings.context.n_seq_max));
  SchedulerParams params{.n_parallel = n_parallel, .prefill_chunk = flags.prefill_chunk, .stop_at_eos = true};
  params.end_tokens = r.tokenizer->vocab().end_of_generation_ids();  // eos, eot, <|im_end|>, ...
  params.grammar_vocabulary =
      std::make_shared<const GrammarVocabulary>(GrammarVocabulary::from_tokenizer(*r.tokenizer));
  r.loop = std::make_unique<ServingLoop>(ctx, std::move(params), loop_limits(flags), metrics);
  if (flags.embeddings) {
    auto pooling = serve_pooling(flags, *r.model);
    if (!pooling) return pooling.error();
    if (!bidirectional) {
      auto embedding = embedding_context(*r.model, ctx);
      if (!embedding) return embedding.error();
      r.embedding_context = std::move(*embedding);
    }
    Context& embedding_ctx = bidirectional ? ctx : *r.embedding_context;
    r.loop->enable_embeddings(embedding_ctx, *pooling);
    log_line(flags, "embeddings: /v1/embeddings and /embeddings, pooling {}, inputs of up to {} tokens{}{}",
             pooling_name(*pooling), Embedder::max_input_tokens(embedding_ctx),
             embedding_ctx.gpu() || !ctx.gpu() ? "" : ", on the CPU",
             bidirectional ? " (a bidirectional model: embeddings only)" : "");
  }
  if (Status s = r.loop->start(); !s) return s.error();
  served.model = r.model.get();
  served.tokenizer = r.tokenizer.get();
  served.loop = r.loop.get();
  served.limits = {.n_ctx = ctx.n_ctx(),
                   .n_vocab = ctx.n_vocab(),
                   .defaults = flags.sampling,
                   .max_tokens = flags.n_predict < 0 ? std::nullopt
                                                     : std::optional<uint32_t>(static_cast<uint32_t>(flags.n_predict))};
  served.limits.grammar = *grammar;
  served.limits.reasoning_format = *reasoning_format_from_name(flags.reasoning_format);   // checked by the flag
  served.limits.template_options = *server_template_options(flags.chat_template_kwargs);  // checked by the flag
  if (bidirectional) {
    served.completions_refused =
        "the model's attention is bidirectional (attention.causal = false): this server computes embeddings only";
  }
  choose_chat_template(flags, *r.model, served);
  describe_for_props(flags, n_parallel, *r.tokenizer, served);
  r.n_slots = n_parallel;
  return r;
}

int serve(ServeFlags& flags) {
  if (Status s = check_foreign_flags(llama_server_flags(), flags.llama_server); !s)
    return report_error(kCommand, s.error().message);
  auto keys = read_api_keys(flags);
  if (!keys) return report_error(kCommand, keys.error().message);
  const sigset_t stop_signals = block_stop_signals();
  ServerMetrics metrics;
  const uint32_t n_parallel = std::max<uint32_t>(1, flags.settings.context.n_seq_max);
  HttpServer http(
      {.host = flags.host,
       .port = flags.port,
       .api_keys = *keys,
       .alias = flags.alias.empty() ? default_alias(flags.model) : flags.alias,
       .metrics = flags.metrics,
       .slots = flags.slots,
       .timeout_s = flags.timeout_s,
       .threads = flags.threads_http > 0 ? flags.threads_http : static_cast<int>(n_parallel + flags.queue_size + 4)},
      metrics);
  if (Status s = http.bind(); !s) return report_error(kCommand, s.error().message);
  log_line(flags, "listening on http://{}:{} (loading {})", flags.host, http.port(), flags.model);
  std::thread listener([&http] { http.serve(); });

  std::atomic<ServingLoop*> loop_for_signal{nullptr};
  std::thread signals([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    if (sig == 0) return;  // woken to end
    log_line(flags, "{} received: draining", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    if (ServingLoop* loop = loop_for_signal.load()) {
      loop->drain();
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(flags.drain_timeout_s);
      if (!loop->wait_idle(deadline) || !http.wait_replies(deadline)) {
        log_line(flags, "requests still running after {} s: cancelled", flags.drain_timeout_s);
      }
    }
    http.stop();
  });

  ServedModel served;
  auto running = load(flags, metrics, served);
  if (!running) {
    http.stop();
    listener.join();
    pthread_kill(signals.native_handle(), SIGTERM);
    signals.join();
    return report_error(kCommand, running.error().message);
  }
  if (!served.chat_template && served.completions_refused.empty()) {
    log_line(flags, "warning: chat requests will be refused: {}", served.chat_template_error);
  }
  loop_for_signal = running->loop.get();
  http.set_ready(served);
  log_line(flags, "ready: {} ({} slots, {} context cells, chat template: {})", flags.model, running->n_slots,
           served.limits.n_ctx, served.chat_template ? std::string(served.chat_template->name()) : "none");
  listener.join();
  running->loop->stop();
  if (signals.joinable()) signals.join();
  log_line(flags, "stopped");
  return 0;
}

}  // namespace

void add_serve_command(Subcommands& commands) {
  auto flags = std::make_shared<ServeFlags>();
  CLI::App* app = commands.add("serve", "Serve a GGUF model over an OpenAI-compatible HTTP API (continuous batching)",
                               [flags] { return serve(*flags); });
  app->add_option("-m,--model", flags->model, "GGUF model file")->required();
  app->add_option("--host", flags->host, "Address to listen on (default 127.0.0.1)");
  app->add_option("--port", flags->port, "Port to listen on (default 8080; 0: any free port)")
      ->transform(int_flag_range({.low = 0, .high = 65535}));
  app->add_option("--api-key", flags->api_keys, "API key clients must send (repeat or comma-separate for several)")
      ->delimiter(',');
  app->add_option("--api-key-file", flags->api_key_file, "File of API keys, one per line");
  app->add_option("-a,--alias", flags->alias, "Model name in replies and /v1/models (default: the file name)");
  app->add_flag("--metrics", flags->metrics, "Serve Prometheus metrics at /metrics");
  app->add_flag("--slots,!--no-slots", flags->slots, "Serve each slot's state at /slots (default on; --no-slots: off)");
  app->add_flag("--log-disable", flags->log_disable, "Print nothing on stderr but errors");
  app->add_option("--timeout", flags->timeout_s, "-to: Read/write timeout of a connection, seconds (default 600)")
      ->transform(int_flag_range({.low = 1}));
  app->add_option("--threads-http", flags->threads_http,
                  "HTTP worker threads (default: -np + --queue-size + 4; each holds one request while it runs)")
      ->transform(int_flag_range({.low = 1}));
  app->add_option("--queue-size", flags->queue_size,
                  "Requests that may wait for a slot; more get 503 with Retry-After (default 16)");
  app->add_option("--drain-timeout", flags->drain_timeout_s,
                  "On SIGTERM, seconds to let running requests finish before cancelling them (default 30)")
      ->transform(int_flag_range({.low = 0}));
  app->add_option("-n,--n-predict", flags->n_predict,
                  "Most tokens a request generates when it does not say (default -1: until end of generation or a "
                  "full context)")
      ->transform(int_flag_range({.low = 1, .special = {{-1, "until end of generation"}}}));
  app->add_option("--prefill-chunk", flags->prefill_chunk,
                  "Most prompt tokens a step reads while other requests generate (chunked prefill: steadier "
                  "inter-token latency, slower prompts on a CPU; default 0: up to -b)");
  app->add_option("--gather", flags->gather_ms,
                  "Milliseconds an idle server waits for more requests after one arrives, so that prompts sent "
                  "together are read in one step (default 2; 0: start at once)")
      ->check(CLI::Range(0.0, 1000.0));
  app->add_option("--chat-template", flags->chat_template,
                  "Chat template family instead of the model's (" + ChatTemplate::names() + ")")
      ->check([](const std::string& name) {
        auto t = ChatTemplate::from_name(name);
        return t ? std::string() : t.error().message;
      });
  app->add_option("--chat-template-file", flags->chat_template_file,
                  "Jinja chat template whose family to use instead of the model's")
      ->check(CLI::ExistingFile)
      ->excludes("--chat-template");
  app->add_flag("--mlock", flags->mlock, "Lock the model's memory in RAM");
  app->add_flag("--embedding,--embeddings", flags->embeddings,
                "Also serve embeddings: POST /v1/embeddings, /embeddings (each input at most -b tokens)");
  app->add_option("--pooling", flags->pooling,
                  "How --embeddings pools a sequence's token states: none, mean, cls or last (default: the "
                  "model's pooling_type, none when it has none)")
      ->check([](const std::string& name) {
        auto p = parse_pooling(name);
        return p ? std::string() : p.error().message;
      });
  app->add_option("--reasoning-format", flags->reasoning_format,
                  "What a chat reply that opens with <think> gives: auto or deepseek (the default, auto) put the "
                  "thought in message.reasoning_content and the rest in content; none keeps it all in content")
      ->check([](const std::string& name) {
        return reasoning_format_from_name(name)
                   ? std::string()
                   : fmt::format("--reasoning-format {}: must be one of {}", name, kReasoningFormatNames);
      });
  app->add_option("--chat-template-kwargs", flags->chat_template_kwargs,
                  "JSON object of chat template arguments, the default of requests' chat_template_kwargs: "
                  "'{\"enable_thinking\": false}' opens Qwen3's replies with an empty thought, "
                  "'{\"reasoning_effort\": \"high\"}' sets gpt-oss's")
      ->check([](const std::string& text) {
        auto options = server_template_options(text);
        return options ? std::string() : options.error().message;
      });
  add_sampling_flags(*app, flags->sampling);
  add_grammar_flags(*app, flags->grammar);
  add_setting_flags(*app, Command::serve, flags->settings);
  add_foreign_flags(*app, llama_server_flags(), flags->llama_server);
  std::vector<FlagAlias> aliases = setting_flag_aliases(Command::serve);
  aliases.push_back({"-to", "--timeout"});
  for (const FlagAlias& alias : grammar_flag_aliases()) aliases.push_back(alias);
  for (const FlagAlias& alias : foreign_flag_aliases(llama_server_flags())) aliases.push_back(alias);
  commands.add_aliases(kCommand, aliases);
}

}  // namespace infertune
