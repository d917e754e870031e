// The runner <-> worker protocol: every request and event survives encoding and decoding, and a line that is
// not a valid event is an error quoting it, never an exception.
#include <gtest/gtest.h>

#include <cmath>

#include "sweeps/run/worker_protocol.h"

namespace infertune {
namespace {

WorkerRequest sample_request() {
  WorkerRequest r;
  r.model_path = "/models/a b\n\"c\".gguf";
  r.group_key = {{"model", "a.gguf"}, {"quant", "q4_0"}, {"n_gpu_layers", 0}, {"mmap", false}};
  r.trials.push_back(WorkerTrial{3, "00ff00ff00ff00ff", {{"threads", 2}, {"workload", {{"kind", "pp"}}}}});
  r.trials.push_back(WorkerTrial{7, "1234567890abcdef", {{"threads", 1}}});
  r.settings.warmup = false;
  r.settings.min_reps = 2;
  r.settings.max_reps = 7;
  r.settings.ci_target = 0.05;
  r.settings.cooldown_s = 1.5;
  r.environment.host_read_bandwidth_gbs = 21.5;
  return r;
}

TEST(WorkerProtocol, RequestRoundTripsOnOneLine) {
  const WorkerRequest r = sample_request();
  const std::string line = encode_request(r);
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  auto back = decode_request(line);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->model_path, r.model_path);
  EXPECT_EQ(back->group_key, r.group_key);
  ASSERT_EQ(back->trials.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back->trials[i].index, r.trials[i].index);
    EXPECT_EQ(back->trials[i].hash, r.trials[i].hash);
    EXPECT_EQ(back->trials[i].config, r.trials[i].config);
  }
  EXPECT_EQ(back->settings.warmup, false);
  EXPECT_EQ(back->settings.min_reps, 2);
  EXPECT_EQ(back->settings.max_reps, 7);
  EXPECT_DOUBLE_EQ(back->settings.ci_target, 0.05);
  EXPECT_DOUBLE_EQ(back->settings.cooldown_s, 1.5);
  ASSERT_TRUE(back->environment.host_read_bandwidth_gbs.has_value());
  EXPECT_DOUBLE_EQ(*back->environment.host_read_bandwidth_gbs, 21.5);
}

TEST(WorkerProtocol, RequestWithoutBandwidthKeepsItAbsent) {
  WorkerRequest r = sample_request();
  r.environment.host_read_bandwidth_gbs.reset();
  auto back = decode_request(encode_request(r));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_FALSE(back->environment.host_read_bandwidth_gbs.has_value());
}

TEST(WorkerProtocol, MalformedRequestsNameTheField) {
  auto bad = [](const std::string& text) {
    auto r = decode_request(text);
    EXPECT_FALSE(r) << text;
    return r ? std::string() : r.error().message;
  };
  EXPECT_NE(bad("{not json").find("not JSON"), std::string::npos);
  EXPECT_NE(bad("[1,2]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(bad("{}").find("model_path"), std::string::npos);
  nlohmann::json j = nlohmann::json::parse(encode_request(sample_request()));
  j["trials"][1].erase("hash");
  EXPECT_NE(bad(j.dump()).find("trials[1]"), std::string::npos);
  j = nlohmann::json::parse(encode_request(sample_request()));
  j["trials"][0]["index"] = -1;
  EXPECT_NE(bad(j.dump()).find("negative"), std::string::npos);
  j = nlohmann::json::parse(encode_request(sample_request()));
  j.erase("settings");
  EXPECT_NE(bad(j.dump()).find("settings"), std::string::npos);
  j = nlohmann::json::parse(encode_request(sample_request()));
  j["environment"]["host_read_bandwidth_gbs"] = "fast";
  EXPECT_NE(bad(j.dump()).find("host_read_bandwidth_gbs"), std::string::npos);
}

WorkerEvent event_of(WorkerEventKind kind, std::string hash = "", std::string reason = "") {
  WorkerEvent e;
  e.kind = kind;
  e.hash = std::move(hash);
  e.reason = std::move(reason);
  return e;
}

WorkerEvent round_trip(const WorkerEvent& e) {
  const std::string line = encode_event(e);
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  auto back = decode_event(line);
  EXPECT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->kind, e.kind) << line;
  return back ? *back : WorkerEvent{};
}

TEST(WorkerProtocol, EveryEventRoundTrips) {
  WorkerEvent loaded = event_of(WorkerEventKind::loaded);
  loaded.load_ms = 12.25;
  EXPECT_DOUBLE_EQ(round_trip(loaded).load_ms, 12.25);

  const WorkerEvent load_failed = event_of(WorkerEventKind::load_failed, "", "cannot open 'x.gguf'\nsecond line");
  EXPECT_EQ(round_trip(load_failed).reason, load_failed.reason);

  const WorkerEvent started = event_of(WorkerEventKind::trial_started, "abc123");
  EXPECT_EQ(round_trip(started).hash, "abc123");

  WorkerEvent failed = event_of(WorkerEventKind::trial_failed, "h1", "decode failed");
  failed.status = TrialStatus::oom;
  const WorkerEvent failed_back = round_trip(failed);
  EXPECT_EQ(failed_back.hash, "h1");
  EXPECT_EQ(failed_back.status, TrialStatus::oom);
  EXPECT_EQ(failed_back.reason, "decode failed");

  round_trip(event_of(WorkerEventKind::group_done));
}

TEST(WorkerProtocol, TrialDoneCarriesTheWholeMeasurement) {
  WorkerEvent done = event_of(WorkerEventKind::trial_done, "feed");
  done.measurement.samples = {{"pp_tps", 0, 100.5, true}, {"pp_tps", 1, 99.25, false}, {"itl_ms", 1, 0.125, false}};
  done.measurement.peak_rss_bytes = int64_t(5) << 33;  // beyond 32 bits
  done.measurement.repetitions = 2;
  done.measurement.ci_target_met = true;
  done.measurement.main_metric = "pp_tps";
  const WorkerEvent back = round_trip(done);
  EXPECT_EQ(back.hash, "feed");
  EXPECT_EQ(back.measurement.samples, done.measurement.samples);
  EXPECT_EQ(back.measurement.peak_rss_bytes, done.measurement.peak_rss_bytes);
  EXPECT_EQ(back.measurement.repetitions, 2);
  EXPECT_TRUE(back.measurement.ci_target_met);
  EXPECT_EQ(back.measurement.main_metric, "pp_tps");

  done.measurement.peak_rss_bytes.reset();
  EXPECT_FALSE(round_trip(done).measurement.peak_rss_bytes.has_value());
}

TEST(WorkerProtocol, NotANumberTravelsAsNull) {
  WorkerEvent done = event_of(WorkerEventKind::trial_done, "nan");
  done.measurement.samples = {{"tg_tps", 0, std::nan(""), false}};
  const WorkerEvent back = round_trip(done);
  ASSERT_EQ(back.measurement.samples.size(), 1u);
  EXPECT_TRUE(std::isnan(back.measurement.samples[0].value));
}

TEST(WorkerProtocol, InvalidUtf8InAReasonIsReplacedNotThrown) {
  const WorkerEvent e = event_of(WorkerEventKind::load_failed, "", "bad \xff\xfe bytes");
  auto back = decode_event(encode_event(e));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_NE(back->reason.find("bytes"), std::string::npos);
}

TEST(WorkerProtocol, MalformedLinesAreErrorsQuotingTheLine) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"Segmentation fault", "not JSON"},
      {"{\"event\":\"loaded\"", "not JSON"},
      {"42", "expected an object"},
      {"{}", "missing field 'event'"},
      {"{\"event\":7}", "'event' is not a string"},
      {"{\"event\":\"exploded\"}", "unknown event 'exploded'"},
      {"{\"event\":\"loaded\",\"load_ms\":\"fast\"}", "'load_ms' is not a number"},
      {"{\"event\":\"trial_started\"}", "missing field 'hash'"},
      {"{\"event\":\"trial_failed\",\"hash\":\"h\",\"status\":\"ok\",\"reason\":\"r\"}", "not a failure status"},
      {"{\"event\":\"trial_failed\",\"hash\":\"h\",\"status\":\"exploded\",\"reason\":\"r\"}", "not a failure status"},
      {"{\"event\":\"trial_done\",\"hash\":\"h\"}", "missing field 'measurement'"},
      {"{\"event\":\"trial_done\",\"hash\":\"h\",\"measurement\":{\"samples\":[{\"metric\":\"pp_tps\","
       "\"repetition\":0.5,\"value\":1,\"is_warmup\":false}],\"repetitions\":1,\"ci_target_met\":true,"
       "\"main_metric\":\"pp_tps\"}}",
       "samples[0]: field 'repetition' is not an integer"},
  };
  for (const auto& [line, expected] : cases) {
    auto e = decode_event(line);
    ASSERT_FALSE(e) << line;
    EXPECT_NE(e.error().message.find(expected), std::string::npos) << line << " -> " << e.error().message;
    EXPECT_NE(e.error().message.find(line.substr(0, 10)), std::string::npos) << e.error().message;
  }
}

TEST(WorkerProtocol, AHugeMalformedLineIsQuotedShort) {
  const std::string line(1 << 20, 'x');
  auto e = decode_event(line);
  ASSERT_FALSE(e);
  EXPECT_LT(e.error().message.size(), 400u);
}

}  // namespace
}  // namespace infertune
