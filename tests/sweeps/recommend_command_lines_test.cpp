// The ready command lines carry the configuration's values with the flags the engine and llama.cpp accept;
// the infertune line is parsed by the real `infertune run`.
#include <gtest/gtest.h>

#include "recommend_test_data.h"
#include "sweeps/recommend/command_lines.h"
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
  EXPECT_EQ(lines.infertune.rfind("infertune run ", 0), 0u) << lines.infertune;
  EXPECT_FALSE(has(lines.infertune, "-np")) << "infertune run has no -np: " << lines.infertune;
  EXPECT_EQ(lines.llama_cpp.rfind("llama-server ", 0), 0u) << lines.llama_cpp;
  EXPECT_TRUE(has(lines.llama_cpp, "-np 4")) << lines.llama_cpp;
  ASSERT_FALSE(lines.notes.empty());
  EXPECT_NE(lines.notes[0].find("-np 4"), std::string::npos) << lines.notes[0];
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

TEST(RecommendCommandLines, GpuLayersOnlyInLlamaCppWithANote) {
  nlohmann::json config = trial_config(2, 1, single_workload("tg", 0, 64));
  config["n_gpu_layers"] = 99;
  const CommandLines lines = command_lines(candidate(config), 2);
  EXPECT_TRUE(has(lines.llama_cpp, "-ngl 99")) << lines.llama_cpp;
  EXPECT_FALSE(has(lines.infertune, "-ngl")) << lines.infertune;
  EXPECT_FALSE(lines.notes.empty());
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
