// The ready command lines carry the configuration's values with the flags the engine and llama.cpp accept;
// the infertune line is parsed by the real `infertune run`.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "engine/settings/setting_flags.h"
#include "engine/settings/settings_table.h"
#include "recommend_test_data.h"
#include "sweeps/recommend/command_lines.h"
#include "sweeps/spec/config_fields.h"
#include "test_support.h"

namespace infertune {
namespace {

using namespace test;

Candidate candidate(nlohmann::json config, const std::string& model = "/models/test.gguf") {
  Candidate c;
  config.erase("workload");
  c.config = config;
  c.model_path = model;
  return c;
}

bool has(const std::string& line, const std::string& part) {
  return (" " + line + " ").find(" " + part + " ") != std::string::npos;
}

// The settings `command`'s own flags (generated from the settings table, as the line is) read back from a command
// line `program -m MODEL FLAGS...`; the model through `model`.
EngineSettings parse_back(const std::string& line, const std::string& program, Command command, std::string& model) {
  std::vector<std::string> args;
  std::istringstream words(line.substr(program.size() + 1));
  for (std::string word; words >> word;) args.push_back(word);
  CLI::App app;
  app.add_option("-m", model);
  EngineSettings parsed = default_engine_settings();
  add_setting_flags(app, command, parsed, [] { return Result<CpuSet>(CpuSet::range(0, 63)); });
  rewrite_flag_aliases(args, setting_flag_aliases(command));
  std::ranges::reverse(args);  // CLI11 takes a vector last argument first
  EXPECT_NO_THROW(app.parse(std::move(args))) << line;
  return parsed;
}

TEST(RecommendCommandLines, CarryEveryValue) {
  nlohmann::json config = trial_config(3, 4, batched_workload(4), 8192);
  config["threads_batch"] = 5;
  config["n_batch"] = 1024;
  config["n_ubatch"] = 128;
  config["type_k"] = "q8_0";
  config["type_v"] = "q4_0";
  config["flash_attn"] = "on";
  config["numa"] = "distribute";
  config["cpu_mask"] = "0xF0";
  const CommandLines lines = command_lines(candidate(config), 16);
  for (const std::string& line : {lines.infertune, lines.llama_cpp}) {
    for (const char* part : {"-m /models/test.gguf", "-t 3", "-tb 5", "-c 8192", "-b 1024", "-ub 128", "-ctk q8_0",
                             "-ctv q4_0", "-fa on", "--numa distribute", "-C 0xF0"}) {
      EXPECT_TRUE(has(line, part)) << part << " in " << line;
    }
  }
  // Parallel sequences are a server's slots: both lines start one.
  EXPECT_EQ(lines.infertune.rfind("infertune serve ", 0), 0u) << lines.infertune;
  EXPECT_TRUE(has(lines.infertune, "-np 4")) << lines.infertune;
  EXPECT_EQ(lines.llama_cpp.rfind("llama-server ", 0), 0u) << lines.llama_cpp;
  EXPECT_TRUE(has(lines.llama_cpp, "-np 4")) << lines.llama_cpp;
}

// The serving scenario's winner runs as a server even with one slot; its infertune line is read back by
// `infertune serve`'s own flags.
TEST(RecommendCommandLines, ServingLinesStartServersAndParseBack) {
  nlohmann::json config = trial_config(2, 1, single_workload("tg", 0, 64), 4096);
  config["n_batch"] = 256;
  const CommandLines lines = command_lines(candidate(config), 8, /*serving=*/true);
  EXPECT_EQ(lines.infertune.rfind("infertune serve ", 0), 0u) << lines.infertune;
  EXPECT_EQ(lines.llama_cpp.rfind("llama-server ", 0), 0u) << lines.llama_cpp;

  std::string model;
  const EngineSettings parsed = parse_back(lines.infertune, "infertune serve", Command::serve, model);
  EXPECT_EQ(model, "/models/test.gguf");
  const EngineSettings expected = read_config_fields_or_defaults(config);
  for (const Setting* s : settings_of(Command::serve)) {
    if (s->key == "threads" || s->key == "threads_batch") continue;  // resolved to the host's 8 cores
    EXPECT_EQ(s->read(parsed), s->read(expected)) << s->key << " in " << lines.infertune;
  }
}

TEST(RecommendCommandLines, OneSequenceIsLlamaCliAndAutoThreadsResolve) {
  nlohmann::json config = trial_config(0, 1, single_workload("tg", 0, 64));
  config["threads_batch"] = 0;
  config["mmap"] = false;
  const CommandLines lines = command_lines(candidate(config, "/my models/it's.gguf"), 8);
  EXPECT_EQ(lines.llama_cpp.rfind("llama-cli ", 0), 0u) << lines.llama_cpp;
  EXPECT_FALSE(has(lines.llama_cpp, "-np"));
  for (const std::string& line : {lines.infertune, lines.llama_cpp}) {
    EXPECT_TRUE(has(line, "-t 8")) << line;
    EXPECT_TRUE(has(line, "-tb 8")) << line;
    EXPECT_TRUE(has(line, "--no-mmap")) << line;
    EXPECT_TRUE(has(line, "-m '/my models/it'\\''s.gguf'")) << line;
    EXPECT_FALSE(has(line, "--numa")) << "none is the default: " << line;
    EXPECT_FALSE(has(line, "-C")) << "0x0 is every CPU: " << line;
  }
  // Without the host's core count the commands keep their own default.
  const CommandLines unknown = command_lines(candidate(config), std::nullopt);
  EXPECT_FALSE(has(unknown.infertune, "-t")) << unknown.infertune;
}

// -ngl goes into both lines: both engines offload the same layers. auto is llama.cpp's own default.
TEST(RecommendCommandLines, GpuLayersInBothLines) {
  nlohmann::json config = trial_config(2, 1, single_workload("tg", 0, 64));
  config["n_gpu_layers"] = 99;
  const CommandLines lines = command_lines(candidate(config), 2);
  EXPECT_TRUE(has(lines.llama_cpp, "-ngl 99")) << lines.llama_cpp;
  EXPECT_TRUE(has(lines.infertune, "-ngl 99")) << lines.infertune;
  config["n_gpu_layers"] = "auto";
  const CommandLines automatic = command_lines(candidate(config), 2);
  EXPECT_FALSE(has(automatic.llama_cpp, "-ngl")) << automatic.llama_cpp;
  EXPECT_TRUE(has(automatic.infertune, "-ngl auto")) << automatic.infertune;
  for (const std::string& note : lines.notes) EXPECT_EQ(note.find("-ngl"), std::string::npos) << note;
}

// A setting at its "not set" value is left out of both lines, as the tools read its absence: -c 0 is the
// command's own context, -np 1 one sequence. (The lines used to print -c 0.) -ngl is the exception: infertune's
// default is 0 (the CPU) and llama.cpp's is auto (what fits the GPU), so the llama.cpp line says -ngl 0.
TEST(RecommendCommandLines, NotSetValuesAreLeftOut) {
  nlohmann::json config = trial_config(2, 1, single_workload("tg", 0, 64), 0);
  const CommandLines lines = command_lines(candidate(config), 2);
  EXPECT_FALSE(has(lines.infertune, "-ngl")) << lines.infertune;
  EXPECT_TRUE(has(lines.llama_cpp, "-ngl 0")) << lines.llama_cpp;
  for (const std::string& line : {lines.infertune, lines.llama_cpp}) {
    for (const char* flag : {"-c", "-np", "--numa", "-C", "--no-mmap", "--cpu-strict", "--poll", "--prio"}) {
      EXPECT_FALSE(has(line, flag)) << flag << " in " << line;
    }
    for (const char* part : {"-t 2", "-tb 2", "-b 512", "-ub 256", "-ctk f16", "-ctv f16", "-fa auto"}) {
      EXPECT_TRUE(has(line, part)) << part << " in " << line;
    }
  }
}

// The infertune line read back by `infertune run`'s own flags (generated from the settings table, as the
// line is) gives the candidate's settings, every one `run` takes.
TEST(RecommendCommandLines, InfertuneLineParsesBackToTheCandidatesSettings) {
  nlohmann::json config = trial_config(3, 1, single_workload("tg", 0, 64), 8192);
  config["threads_batch"] = 5;
  config["cpu_mask"] = "0x3";
  config["numa"] = "distribute";
  config["n_gpu_layers"] = 99;
  config["n_batch"] = 1024;
  config["n_ubatch"] = 128;
  config["type_k"] = "q8_0";
  config["type_v"] = "q4_0";
  config["flash_attn"] = "on";
  config["mmap"] = false;
  const CommandLines lines = command_lines(candidate(config), 16);

  std::string model;
  const EngineSettings parsed = parse_back(lines.infertune, "infertune run", Command::run, model);

  EXPECT_EQ(model, "/models/test.gguf");
  const EngineSettings expected = read_config_fields_or_defaults(config);
  for (const Setting* s : settings_of(Command::run)) {
    EXPECT_EQ(s->read(parsed), s->read(expected)) << s->key << " in " << lines.infertune;
  }
  EXPECT_EQ(parsed.placement.threads_batch, 5);
  EXPECT_FALSE(parsed.use_mmap);
}

TEST(RecommendCommandLines, InfertuneRunAcceptsTheFlags) {
  nlohmann::json config = trial_config(2, 1, single_workload("tg", 0, 64), 2048);
  config["numa"] = "distribute";
  config["cpu_mask"] = "0x3";
  config["type_k"] = "q8_0";
  config["flash_attn"] = "off";
  const std::string missing = (temp_dir() / "no-such-model.gguf").string();
  const CommandLines lines = command_lines(candidate(config, missing), 2);
  const std::string args = lines.infertune.substr(std::string("infertune ").size());
  const auto r = run_command(infertune_binary() + " " + args + " -p hi 2>&1");
  // The flags parse; what fails is opening the model, named in the message.
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("no-such-model.gguf"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace infertune
