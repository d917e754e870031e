// GET /slots and GET /props (engine/server/monitoring_routes.h): the bodies' fields against the slot states they
// are made of, and through the server: a running request shows in its slot with its own sampling, its prompt
// size and a growing count of generated tokens; ?fail_on_no_slot=1 is 503 while every slot is busy; --no-slots
// turns the route off; an idle slot keeps its cached tokens for reuse; /props says the slots and the model.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <thread>

#include "engine/server/monitoring_routes.h"
#include "server_harness.h"

namespace infertune {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

TEST(MonitoringRoutes, AnIdleSlotSaysOnlyThatItIsIdle) {
  const RequestLimits limits{.n_ctx = 512, .n_vocab = 100, .defaults = {}, .max_tokens = 64};
  const std::vector<SlotState> slots{{.id = 0, .running = std::nullopt, .n_cached = 17}};
  const json body = slots_json(slots, limits);
  ASSERT_EQ(body.size(), 1u);
  EXPECT_EQ(body[0], json({{"id", 0},
                           {"n_ctx", 512},
                           {"speculative", false},
                           {"is_processing", false},
                           {"prefilling", false},
                           {"n_cached", 17}}));
}

TEST(MonitoringRoutes, ABusySlotShowsItsRequest) {
  SlotState running{
      .id = 1,
      .running =
          SchedulerPlan::Progress{
              .id = 9, .n_prompt = 30, .n_generated = 5, .max_new_tokens = 20, .n_reused = 12, .prefilling = false},
      .ignore_eos = true,
      .n_probs = 3,
      .n_cached = 34};
  running.sampling.temperature = 0;
  running.sampling.seed = 42;
  const json slot = slots_json(std::vector<SlotState>{running}, RequestLimits{})[0];
  EXPECT_EQ(slot["id"], 1);
  EXPECT_EQ(slot["id_task"], 9);
  EXPECT_EQ(slot["is_processing"], true);
  EXPECT_EQ(slot["n_prompt_tokens"], 35);            // llama-server counts the slot's tokens: prompt + generated
  EXPECT_EQ(slot["n_prompt_tokens_processed"], 18);  // the prompt's 30 less the 12 found cached
  EXPECT_EQ(slot["n_prompt_tokens_cache"], 12);
  ASSERT_TRUE(slot["next_token"].is_array());
  EXPECT_EQ(slot["next_token"][0]["n_decoded"], 5);
  EXPECT_EQ(slot["next_token"][0]["n_remain"], 15);
  EXPECT_EQ(slot["params"]["n_predict"], 20);
  EXPECT_EQ(slot["params"]["seed"], 42);
  EXPECT_EQ(slot["params"]["ignore_eos"], true);
  EXPECT_EQ(slot["params"]["n_probs"], 3);
  EXPECT_EQ(slot["params"]["samplers"], json::array({"penalties"}));  // greedy: the truncations cannot matter
}

TEST(MonitoringRoutes, APrefillingSlotCountsThePromptReadSoFar) {
  const SlotState slot{
      .id = 0,
      .running =
          SchedulerPlan::Progress{
              .id = 2, .n_prompt = 100, .n_generated = 0, .max_new_tokens = 8, .n_reused = 40, .prefilling = true},
      .n_cached = 64};
  const json body = slots_json(std::vector<SlotState>{slot}, RequestLimits{})[0];
  EXPECT_EQ(body["prefilling"], true);
  EXPECT_EQ(body["n_prompt_tokens_processed"], 24);
  EXPECT_EQ(body["next_token"][0]["n_decoded"], 0);
}

TEST(MonitoringRoutes, PropsSayTheSlotsModelAndTemplate) {
  ServerProps given;
  given.total_slots = 4;
  given.model_path = "/models/m.gguf";
  given.chat_template_source = "{% for m in messages %}<|im_start|>{% endfor %}";
  given.chat_template_family = "chatml";
  given.bos_token = "<s>";
  RequestLimits limits{.n_ctx = 2048};
  limits.defaults.top_k = 7;
  const json props = props_json(given, {.model_alias = "m", .slots = true, .metrics = true}, limits);
  EXPECT_EQ(props["total_slots"], 4);
  EXPECT_EQ(props["model_alias"], "m");
  EXPECT_EQ(props["model_path"], "/models/m.gguf");
  EXPECT_EQ(props["chat_template"], given.chat_template_source);
  EXPECT_EQ(props["chat_template_family"], "chatml");
  EXPECT_EQ(props["bos_token"], "<s>");
  EXPECT_EQ(props["endpoint_slots"], true);
  EXPECT_EQ(props["endpoint_metrics"], true);
  EXPECT_EQ(props["default_generation_settings"]["n_ctx"], 2048);
  EXPECT_EQ(props["default_generation_settings"]["params"]["top_k"], 7);
  EXPECT_EQ(props["default_generation_settings"]["params"]["n_predict"], -1);
  EXPECT_EQ(props["modalities"]["vision"], false);
}

// A job the client does not wait for: long enough (16,000 tokens, end tokens ignored) to be seen running.
std::shared_ptr<RequestChannel> submit_long_job(test::ServerHarness& h, std::vector<int32_t> prompt) {
  ServeJob job;
  job.prompt = std::move(prompt);
  job.max_tokens = 16000;
  job.ignore_eos = true;
  job.sampling.temperature = 0.5f;
  job.sampling.seed = 7;
  auto submitted = h.loop().submit(std::move(job));
  EXPECT_TRUE(submitted.channel);
  return submitted.channel;
}

json get_json(const test::ServerHarness& h, const std::string& path) {
  auto res = h.client().Get(path);
  EXPECT_TRUE(res) << path;
  if (!res) return json();
  EXPECT_EQ(res->status, 200) << path << ": " << res->body;
  return json::parse(res->body, nullptr, false);
}

// The first busy slot of /slots, polled until one is seen generating (or a deadline).
json poll_generating_slot(const test::ServerHarness& h) {
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < deadline) {
    for (const json& slot : get_json(h, "/slots")) {
      if (slot["is_processing"] == true && slot["next_token"][0]["n_decoded"].get<int>() > 0) return slot;
    }
    std::this_thread::sleep_for(2ms);
  }
  return json();
}

TEST(MonitoringRoutes, SlotsShowARunningRequestThroughTheServer) {
  test::ServerHarness h({.n_parallel = 1, .n_ctx = 16384});
  h.ready();
  const std::vector<int32_t> prompt = h.tokenizer().encode("Once upon a time", true, true);
  auto channel = submit_long_job(h, prompt);
  const json first = poll_generating_slot(h);
  ASSERT_FALSE(first.is_null()) << "no slot was seen generating";
  EXPECT_GE(first["id_task"].get<int>(), 0);
  EXPECT_EQ(first["n_prompt_tokens_processed"], prompt.size());
  EXPECT_EQ(first["n_prompt_tokens"], prompt.size() + first["next_token"][0]["n_decoded"].get<size_t>());
  EXPECT_EQ(first["prefilling"], false);
  EXPECT_FLOAT_EQ(first["params"]["temperature"].get<float>(), 0.5f);
  EXPECT_EQ(first["params"]["seed"], 7);
  EXPECT_EQ(first["params"]["n_predict"], 16000);

  auto busy = h.client().Get("/slots?fail_on_no_slot=1");
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->status, 503) << busy->body;
  const json later = poll_generating_slot(h);
  ASSERT_FALSE(later.is_null());
  EXPECT_GE(later["next_token"][0]["n_decoded"].get<int>(), first["next_token"][0]["n_decoded"].get<int>());

  h.loop().cancel(channel);
  ASSERT_TRUE(h.loop().wait_idle(std::chrono::steady_clock::now() + 10s));
  const json idle = get_json(h, "/slots")[0];
  EXPECT_EQ(idle["is_processing"], false);
  EXPECT_FALSE(idle.contains("id_task"));
  EXPECT_EQ(h.client().Get("/slots?fail_on_no_slot=1")->status, 200);
}

TEST(MonitoringRoutes, AFinishedRequestLeavesItsTokensCachedInTheIdleSlot) {
  test::ServerHarness h({.n_parallel = 2});
  h.ready();
  ServeJob job;
  job.prompt = h.tokenizer().encode("Once upon a time there was", true, true);
  job.max_tokens = 4;
  job.ignore_eos = true;
  const size_t n_prompt = job.prompt.size();
  auto channel = h.loop().submit(std::move(job)).channel;
  ASSERT_TRUE(channel);
  while (!channel->wait(1000ms).finished) {
  }
  ASSERT_TRUE(h.loop().wait_idle(std::chrono::steady_clock::now() + 10s));
  size_t cached = 0;
  for (const json& slot : get_json(h, "/slots")) cached += slot["n_cached"].get<size_t>();
  // The prompt and the generated tokens but the last (sampled, never decoded).
  EXPECT_EQ(cached, n_prompt + 3);
}

TEST(MonitoringRoutes, NoSlotsTurnsTheRouteOffAndPropsStayOn) {
  test::ServerHarness h({.slots = false});
  h.ready();
  auto off = h.client().Get("/slots");
  ASSERT_TRUE(off);
  EXPECT_EQ(off->status, 501);
  EXPECT_NE(off->body.find("--no-slots"), std::string::npos) << off->body;
  const json props = get_json(h, "/props");
  EXPECT_EQ(props["total_slots"], 2);
  EXPECT_EQ(props["chat_template_family"], "chatml");
  EXPECT_EQ(props["default_generation_settings"]["n_ctx"], 256);
  EXPECT_EQ(props["model_alias"], "fixture");
  EXPECT_FLOAT_EQ(props["default_generation_settings"]["params"]["temperature"].get<float>(), 0.0f);
}

}  // namespace
}  // namespace infertune
