// The sweep spec: YAML and flags give the same SweepSpec, lists and ranges expand as in bench, errors name
// the YAML line and key or the flag, and the spec hash depends on the settings only.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/settings/settings_table.h"
#include "sweeps/spec/spec_flags.h"
#include "sweeps/spec/spec_yaml.h"
#include "sweeps/spec/sweep_spec.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

Result<SweepSpec> from_yaml(const std::string& yaml) {
  auto text = parse_spec_yaml(yaml, "spec.yaml");
  if (!text) return text.error();
  return resolve_spec(*text);
}

// Flags by spec key, as CLI11 collects them: a setting's into SpecFlagText::settings, the others into values.
SpecFlagText flag_text(const std::map<std::string, std::vector<std::string>>& values) {
  SpecFlagText text;
  for (const auto& [key, occurrences] : values) {
    (find_setting(key) ? text.settings.occurrences : text.values)[key] = occurrences;
  }
  return text;
}

Result<SweepSpec> from_flags(const std::map<std::string, std::vector<std::string>>& values) {
  return resolve_spec(merge_spec_flags({}, flag_text(values)));
}

using Values = std::vector<std::string>;

constexpr const char* kYaml = R"(models: [a.gguf, b.gguf]
threads: 1-4
batch_size: [256, 512-2048*2]
cache_type_k: [F16, q8_0]
flash_attn: [on, off]
mmap: [1, 0]
workloads:
  - {pp: 512}
  - {pp: 64, tg: 16, depth: 1024}
  - {np: [1, 4], pp: 128, tg: 32}
max_mem: 1.5G
min_ctx: 256
time_budget: 30m
order: random:7
)";

TEST(SweepSpec, YamlExpandsListsAndRanges) {
  auto spec = from_yaml(kYaml);
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->models, (std::vector<std::string>{"a.gguf", "b.gguf"}));
  EXPECT_EQ(spec->settings.at("threads"), (Values{"1", "2", "3", "4"}));
  EXPECT_EQ(spec->settings.at("batch_size"), (Values{"256", "512", "1024", "2048"}));
  EXPECT_EQ(spec->settings.at("cache_type_k"), (Values{"f16", "q8_0"}));  // canonical spelling
  EXPECT_EQ(spec->settings.at("cache_type_v"), (Values{"f16"}));          // bench's default
  EXPECT_EQ(spec->settings.at("flash_attn"), (Values{"on", "off"}));
  EXPECT_EQ(spec->settings.at("mmap"), (Values{"1", "0"}));
  ASSERT_EQ(spec->workloads.size(), 4u);
  EXPECT_EQ(spec->workloads[0].name(), "pp512");
  EXPECT_EQ(spec->workloads[1].name(), "pp64+tg16@d1024");
  EXPECT_EQ(spec->workloads[2].name(), "batched np1 pp128+tg32");
  EXPECT_EQ(spec->workloads[3].name(), "batched np4 pp128+tg32");
  EXPECT_EQ(spec->max_mem_bytes, uint64_t(1.5 * 1024 * 1024 * 1024));
  EXPECT_EQ(spec->min_ctx, 256);
  EXPECT_EQ(spec->time_budget_s, 1800.0);
  EXPECT_EQ(spec->order, TrialOrder::Random);
  EXPECT_EQ(spec->seed, 7u);
}

TEST(SweepSpec, FlagsGiveTheSameSpecAsYaml) {
  auto yaml = from_yaml(kYaml);
  ASSERT_TRUE(yaml) << yaml.error().message;
  auto flags = from_flags({{"models", {"a.gguf,b.gguf"}},
                           {"threads", {"1-4"}},
                           {"batch_size", {"256", "512-2048*2"}},
                           {"cache_type_k", {"f16,q8_0"}},
                           {"flash_attn", {"on,off"}},
                           {"mmap", {"1,0"}},
                           {"n_prompt", {"512"}},
                           {"batched", {"1,4:128,32"}},
                           {"max_mem", {"1536M"}},
                           {"min_ctx", {"256"}},
                           {"time_budget", {"1800"}},
                           {"order", {"random(7)"}}});
  ASSERT_TRUE(flags) << flags.error().message;
  // The flat workload keys cannot say "pp64+tg16 at depth 1024 only"; compare without that one.
  auto expected = *yaml;
  expected.workloads.erase(expected.workloads.begin() + 1);
  EXPECT_EQ(flags->to_json(), expected.to_json());
  EXPECT_EQ(flags->hash(), expected.hash());
}

TEST(SweepSpec, ServedWorkloadsFromFlagsAndYaml) {
  auto flags =
      from_flags({{"models", {"m.gguf"}}, {"serve", {"1,4:90,32"}}, {"slo_ttft", {"500ms"}}, {"slo_itl", {"0.1s"}}});
  ASSERT_TRUE(flags) << flags.error().message;
  ASSERT_EQ(flags->workloads.size(), 2u);
  EXPECT_EQ(flags->workloads[0].name(), "serve c1 pp90+tg32");
  EXPECT_EQ(flags->workloads[1].name(), "serve c4 pp90+tg32");
  EXPECT_EQ(flags->workloads[1].slo_ttft_ms, 500.0);
  EXPECT_EQ(flags->workloads[1].slo_itl_ms, 100.0);
  auto yaml =
      from_yaml("models: m.gguf\nworkloads:\n  - {clients: [1, 4], pp: 90, tg: 32, slo_ttft: 500ms, slo_itl: 100ms}\n");
  ASSERT_TRUE(yaml) << yaml.error().message;
  EXPECT_EQ(yaml->to_json(), flags->to_json());
  // Only served workloads carry clients and an objective: the other kinds' canonical form is as before.
  EXPECT_TRUE(flags->to_json()["workloads"][0].contains("clients"));
  auto plain = from_flags({{"models", {"m.gguf"}}, {"n_gen", {"16"}}});
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_FALSE(plain->to_json()["workloads"][0].contains("clients"));
}

TEST(SweepSpec, ServedWorkloadErrorsNameTheKey) {
  auto spec = from_flags({{"models", {"m.gguf"}}, {"serve", {"4"}}});
  ASSERT_FALSE(spec);
  EXPECT_NE(spec.error().message.find("--serve"), std::string::npos) << spec.error().message;
  spec = from_flags({{"models", {"m.gguf"}}, {"serve", {"0:90,32"}}});
  ASSERT_FALSE(spec);
  EXPECT_NE(spec.error().message.find("clients"), std::string::npos) << spec.error().message;
  spec = from_flags({{"models", {"m.gguf"}}, {"serve", {"2:90,32"}}, {"slo_ttft", {"soon"}}});
  ASSERT_FALSE(spec);
  EXPECT_NE(spec.error().message.find("--slo-ttft"), std::string::npos) << spec.error().message;
  spec = from_yaml("models: m.gguf\nworkloads:\n  - {clients: 2, np: 2, pp: 9, tg: 3}\n");
  ASSERT_FALSE(spec);
  EXPECT_NE(spec.error().message.find("np (batched) or clients"), std::string::npos) << spec.error().message;
  spec = from_yaml("models: m.gguf\nworkloads:\n  - {pp: 9, tg: 3, slo_ttft: 1s}\n");
  ASSERT_FALSE(spec);
  EXPECT_NE(spec.error().message.find("served workload"), std::string::npos) << spec.error().message;
}

TEST(SweepSpec, QualityBudgetsAreReadButLeaveTheHash) {
  auto plain = from_yaml("base_model: f16.gguf\nquant_types: [q8_0, q4_0]\n");
  auto budget = from_yaml("base_model: f16.gguf\nquant_types: [q8_0, q4_0]\nmax_quality_loss: 1.5%\nmax_kld: 0.05\n");
  ASSERT_TRUE(plain && budget);
  EXPECT_EQ(budget->max_quality_loss_pct, 1.5);
  EXPECT_EQ(budget->max_kld, 0.05);
  EXPECT_FALSE(plain->max_quality_loss_pct || plain->max_kld);
  // A budget chooses among the trials; it does not change which run, so a resume with one added matches.
  EXPECT_EQ(budget->hash(), plain->hash());
  auto flags =
      from_flags({{"base_model", {"f16.gguf"}}, {"quant_types", {"q8_0,q4_0"}}, {"max_quality_loss", {"1.5"}}});
  ASSERT_TRUE(flags) << flags.error().message;
  EXPECT_EQ(flags->max_quality_loss_pct, 1.5);
  for (const char* bad : {"max_quality_loss: lots\n", "max_quality_loss: -1%\n", "max_kld: -0.1\n", "max_kld: 0.1x\n",
                          "max_kld: [0.1, 0.2]\n"}) {
    auto spec = from_yaml(std::string("models: m.gguf\n") + bad);
    ASSERT_FALSE(spec) << bad;
    EXPECT_NE(spec.error().message.find("spec.yaml:2"), std::string::npos) << spec.error().message;
  }
}

TEST(SweepSpec, EngineLlamaCppNeedsItsToolsAndChangesTheHash) {
  auto ours = from_yaml("models: m.gguf\n");
  auto named = from_yaml("models: m.gguf\nengine: infertune\n");
  auto llama = from_yaml("models: m.gguf\nengine: llama.cpp\nllama_cpp_bin: /opt/llama/bin\n");
  ASSERT_TRUE(ours && named && llama);
  EXPECT_EQ(llama->engine, SweepEngine::llama_cpp);
  EXPECT_EQ(llama->llama_cpp_bin, "/opt/llama/bin");
  EXPECT_EQ(named->hash(), ours->hash());  // the default engine leaves the hash as it was
  EXPECT_NE(llama->hash(), ours->hash());
  const std::pair<const char*, const char*> bad[] = {
      {"engine: vllm\n", "not an engine"},
      {"engine: llama.cpp\n", "needs llama_cpp_bin"},
      {"llama_cpp_bin: /opt\n", "is for engine: llama.cpp"},
  };
  for (const auto& [yaml, message] : bad) {
    auto spec = from_yaml(std::string("models: m.gguf\n") + yaml);
    ASSERT_FALSE(spec) << yaml;
    EXPECT_NE(spec.error().message.find(message), std::string::npos) << spec.error().message;
  }
}

TEST(SweepSpec, HashIgnoresKeyOrderButNotValues) {
  auto a = from_yaml("models: m.gguf\nthreads: [1, 2]\nbatch_size: 256\n");
  auto b = from_yaml("batch_size: 256\nthreads: 1,2\nmodels: [m.gguf]\n");
  auto c = from_yaml("models: m.gguf\nthreads: [1, 3]\nbatch_size: 256\n");
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->hash(), b->hash());
  EXPECT_NE(a->hash(), c->hash());
  EXPECT_EQ(a->hash().size(), 16u);
}

TEST(SweepSpec, DefaultWorkloadsAreBenchs) {
  auto spec = from_yaml("models: m.gguf\n");
  ASSERT_TRUE(spec);
  ASSERT_EQ(spec->workloads.size(), 2u);
  EXPECT_EQ(spec->workloads[0].name(), "pp512");
  EXPECT_EQ(spec->workloads[1].name(), "tg128");
}

TEST(SweepSpec, FlatWorkloadsRunAtEveryDepth) {
  auto spec = from_flags({{"models", {"m.gguf"}}, {"n_prompt", {"128"}}, {"n_gen", {"32"}}, {"depth", {"0,512"}}});
  ASSERT_TRUE(spec) << spec.error().message;
  std::vector<std::string> names;
  for (const auto& w : spec->workloads) names.push_back(w.name());
  EXPECT_EQ(names, (std::vector<std::string>{"pp128", "tg32", "pp128@d512", "tg32@d512"}));
}

void expect_error(const std::string& yaml, const std::string& fragment) {
  auto spec = from_yaml(yaml);
  ASSERT_FALSE(spec) << yaml;
  EXPECT_NE(spec.error().message.find(fragment), std::string::npos) << spec.error().message;
}

TEST(SweepSpec, YamlErrorsNameLineAndKey) {
  expect_error("models: m.gguf\nthreads: [1, x]\n", "spec.yaml:2: threads");
  expect_error("models: m.gguf\n\nthreadz: 4\n", "spec.yaml:3: threadz: unknown key 'threadz'");
  expect_error("models: m.gguf\ncache_type_v: q5_1\n", "spec.yaml:2: cache_type_v: 'q5_1' is not a KV cache type");
  expect_error("models: m.gguf\nflash_attn: maybe\n", "spec.yaml:2: flash_attn");
  expect_error("models: m.gguf\nmax_mem: lots\n", "spec.yaml:2: max_mem: 'lots' is not a memory size");
  expect_error("models: m.gguf\nworkloads:\n  - {pp: 1}\n  - {pq: 5}\n", "spec.yaml:4: workloads[1]");
  expect_error("models: m.gguf\nworkloads:\n  - {tg: 0}\n", "needs pp or tg");
  expect_error("models: m.gguf\norder: sideways\n", "spec.yaml:2: order");
  expect_error("models: [m.gguf\n", "spec.yaml:");  // a syntax error: line and column from yaml-cpp
  expect_error("threads: 2\n", "no model");
  expect_error("base_model: m.gguf\n", "base_model needs quant_types");
  // The ranges are the settings table's, as bench's and run's.
  expect_error("models: m.gguf\nparallel: 0\n", "spec.yaml:2: parallel: 0 is out of range; allowed: 1..256");
  expect_error("models: m.gguf\nthreads: 2000\n", "spec.yaml:2: threads: 2000 is out of range; allowed: ");
  expect_error("models: m.gguf\nnuma: spread\n", "spec.yaml:2: numa: 'spread' is not none, distribute");
  expect_error("models: m.gguf\ncpu_mask: 0xZZ\n", "spec.yaml:2: cpu_mask: ");
  expect_error("models: m.gguf\nmmap: 2\n", "spec.yaml:2: mmap: '2' is not 0 or 1");
  // Settings the sweep does not take are not spec keys.
  expect_error("models: m.gguf\nmlock: 1\n", "spec.yaml:2: mlock: unknown key 'mlock'");
}

TEST(SweepSpec, FlagErrorsNameTheFlag) {
  auto spec = from_flags({{"models", {"m.gguf"}}, {"threads", {"1-x"}}});
  ASSERT_FALSE(spec);
  EXPECT_EQ(spec.error().message.rfind("-t", 0), 0u) << spec.error().message;
  spec = from_flags({{"models", {"m.gguf"}}, {"cache_type_k", {"q9"}}});
  ASSERT_FALSE(spec);
  EXPECT_NE(spec.error().message.find("-ctk: 'q9'"), std::string::npos) << spec.error().message;
  spec = from_flags({{"models", {"m.gguf"}}, {"batched", {"1,2"}}});
  ASSERT_FALSE(spec);
  EXPECT_NE(spec.error().message.find("--batched"), std::string::npos) << spec.error().message;
}

// Two values of a setting other than its default, as a comma list: numbers and 0/1 by kind; words from
// samples (a word setting without one is checked with its default alone).
std::string sample_values(const Setting& s) {
  static const std::map<std::string_view, std::string> kWords{{"cpu_mask", "0x1,0x3"},
                                                              {"numa", "distribute,isolate"},
                                                              {"cache_type_k", "q8_0,f32"},
                                                              {"cache_type_v", "q4_0,bf16"},
                                                              {"flash_attn", "on,off"}};
  if (s.kind == ValueKind::Integer) return "2,3";
  if (s.kind == ValueKind::Boolean) return "0,1";
  auto it = kWords.find(s.key);
  return it != kWords.end() ? it->second : std::string(s.default_value);
}

// The spec `infertune sweep` builds from `args` (its flags, llama.cpp's multi-letter ones included).
Result<SweepSpec> from_command_line(std::vector<std::string> args) {
  CLI::App app;
  SpecFlagText text;
  add_sweep_spec_flags(app, text);
  rewrite_flag_aliases(args, sweep_flag_aliases());
  std::ranges::reverse(args);  // CLI11 takes a vector last argument first
  try {
    app.parse(std::move(args));
  } catch (const CLI::ParseError& e) {
    return fail("{}", e.what());
  }
  return resolve_spec(merge_spec_flags({}, text));
}

TEST(SweepSpec, EverySettingsFlagAndYamlKeyGiveTheSameSpec) {
  const std::vector<const Setting*> settings = settings_of(Command::sweep);
  ASSERT_FALSE(settings.empty());
  for (const Setting* s : settings) {
    EXPECT_TRUE(is_spec_key(s->key)) << s->key;
    const std::string values = sample_values(*s);
    const std::string yaml = fmt::format("models: m.gguf\n{}: \"{}\"\n", s->key, values);
    auto from_yaml_key = from_yaml(yaml);
    ASSERT_TRUE(from_yaml_key) << yaml << from_yaml_key.error().message;
    for (std::string_view flag : {s->short_flag, s->long_flag}) {
      if (flag.empty()) continue;
      auto from_flag = from_command_line({"-m", "m.gguf", std::string(flag), values});
      ASSERT_TRUE(from_flag) << flag << " " << values << ": " << from_flag.error().message;
      EXPECT_EQ(from_flag->to_json(), from_yaml_key->to_json()) << flag << " " << values;
      EXPECT_EQ(from_flag->hash(), from_yaml_key->hash()) << flag;
    }
    if (values != s->default_value) {
      EXPECT_NE(from_yaml_key->settings.at(std::string(s->key)), (Values{std::string(s->default_value)})) << s->key;
    }
  }
}

TEST(SweepSpec, AliasesAreTheMultiLetterShortFlags) {
  std::vector<std::string> args{"-tb", "2", "-ngl", "1", "-pg", "8,4", "-t", "1", "--", "-ngl"};
  rewrite_flag_aliases(args, sweep_flag_aliases());
  EXPECT_EQ(args, (Values{"--threads-batch", "2", "--n-gpu-layers", "1", "--pg", "8,4", "-t", "1", "--", "-ngl"}));
}

TEST(SweepSpec, FlagsReplaceYamlKeys) {
  auto text = parse_spec_yaml("models: m.gguf\nthreads: 1-4\nworkloads:\n  - {pp: 64}\n", "s.yaml");
  ASSERT_TRUE(text);
  auto spec = resolve_spec(merge_spec_flags(*text, flag_text({{"threads", {"8"}}, {"n_gen", {"16"}}})));
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->settings.at("threads"), (Values{"8"}));
  ASSERT_EQ(spec->workloads.size(), 1u);
  EXPECT_EQ(spec->workloads[0].name(), "tg16");
}

TEST(SweepSpec, ByteSizesAndDurations) {
  EXPECT_EQ(*parse_byte_size("8G", "x"), 8ull << 30);
  EXPECT_EQ(*parse_byte_size("512MiB", "x"), 512ull << 20);
  EXPECT_EQ(*parse_byte_size("1000", "x"), 1000u);
  EXPECT_EQ(*parse_byte_size("2k", "x"), 2048u);
  EXPECT_FALSE(parse_byte_size("8X", "x"));
  EXPECT_FALSE(parse_byte_size("-1G", "x"));
  EXPECT_EQ(*parse_duration_s("2h", "x"), 7200.0);
  EXPECT_EQ(*parse_duration_s("90", "x"), 90.0);
  EXPECT_FALSE(parse_duration_s("5d", "x"));
  EXPECT_FALSE(parse_duration_s("1e306h", "x"));  // finite seconds, infinite hours: fuzzing found it accepted
}

// tests/fuzz/spec_yaml_fuzz timed out on a spec whose lists multiply into 84,000 workloads; wider ranges would
// exhaust memory in the plan. Both are errors that give the count.
TEST(SweepSpec, ASpecExpandingPastTheCapsIsRefusedWithItsCount) {
  auto workloads = from_yaml("models: m.gguf\nn_prompt: 32,1,18-2490+3\nn_gen: [322264]\ndepth: 2-102\n");
  ASSERT_FALSE(workloads);
  EXPECT_THAT(workloads.error().message, HasSubstr("83628 workloads"));
  EXPECT_THAT(workloads.error().message, HasSubstr("depth"));

  auto trials = from_yaml("models: m.gguf\nthreads: 1-64\nbatch_size: 1-4096\nn_prompt: 512\n");
  ASSERT_FALSE(trials);
  EXPECT_THAT(trials.error().message,
              HasSubstr("1 models x 1 workloads x batch_size 4096 x threads 64 = 262144 trials"));

  EXPECT_TRUE(from_yaml("models: m.gguf\nthreads: 1-16\nbatch_size: 1-4096\nn_prompt: 512\n"));  // 65536
}

}  // namespace
}  // namespace infertune
