// The host probe's JSON: a serialize -> parse round trip gives back an equal probe, the documented field
// names are where the header says, and damaged documents are rejected with the field named.
#include <gtest/gtest.h>

#include "bench/probe/json_fields.h"
#include "bench/probe/probe_json.h"
#include "probe_sample.h"

namespace infertune {
namespace {

TEST(ProbeJson, RoundTripThroughTextGivesAnEqualProbe) {
  const HostProbe probe = test::sample_probe();
  auto parsed = parse_host_probe(host_probe_to_text(probe));
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(*parsed, probe);
}

TEST(ProbeJson, RoundTripKeepsDoublesBitExactAndEmptyLists) {
  HostProbe probe = test::sample_probe();
  probe.bandwidth.read_all_cores.best = 0.1 + 0.2;  // not representable in few digits
  probe.compute.f32_one_core.median = 1.0 / 3.0;
  probe.host.gpus.clear();
  probe.gpus.clear();
  probe.host.caches.clear();
  auto parsed = parse_host_probe(host_probe_to_text(probe));
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(*parsed, probe);
}

TEST(ProbeJson, FieldNamesAreTheDocumentedOnes) {
  const auto j = nlohmann::json::parse(host_probe_to_text(test::sample_probe()));
  EXPECT_EQ(j.at("format"), "infertune-host-probe");
  EXPECT_EQ(j.at("format_version"), kHostProbeFormatVersion);
  EXPECT_EQ(j.at("fingerprint"), "0123456789abcdef");
  EXPECT_EQ(j.at("measured_at"), "2025-06-01T12:00:00Z");
  EXPECT_EQ(j.at("measured_at_unix"), 1748779200);
  EXPECT_EQ(j.at("host").at("cpu").at("physical_cores"), 112);
  EXPECT_EQ(j.at("host").at("cpu").at("hardware_threads"), 224);
  EXPECT_EQ(j.at("host").at("caches").at(2).at("level"), "L3");
  EXPECT_EQ(j.at("host").at("caches").at(2).at("count"), 2);
  EXPECT_EQ(j.at("host").at("numa_nodes").at(1).at("cpus"), "56-111,168-223");
  EXPECT_EQ(j.at("host").at("memory_bytes"), 511ull << 30);
  EXPECT_EQ(j.at("host").at("gpus").at(0).at("compute_major"), 9);
  EXPECT_EQ(j.at("bandwidth").at("unit"), "GB/s");
  EXPECT_DOUBLE_EQ(j.at("bandwidth").at("read_all_cores").at("best").get<double>(), 412.3456789);
  EXPECT_EQ(j.at("bandwidth").at("read_one_core").at("threads"), 1);
  EXPECT_EQ(j.at("compute").at("f32_fma").at("unit"), "GFLOP/s");
  EXPECT_EQ(j.at("compute").at("int8_dot").at("isa"), "avx512-vnni");
  EXPECT_DOUBLE_EQ(j.at("compute").at("int8_dot").at("all_cores").at("median").get<double>(), 100000.125);
}

TEST(ProbeJson, GpuFieldsAreTheDocumentedOnesWithNullForUnknown) {
  const auto j = nlohmann::json::parse(host_probe_to_text(test::sample_probe()));
  const auto& h100 = j.at("host").at("gpus").at(0);
  EXPECT_EQ(h100.at("pci_bus_id"), "00000000:19:00.0");
  EXPECT_EQ(h100.at("memory_bus_width_bits"), 5120);
  EXPECT_EQ(h100.at("max_memory_clock_mhz"), 2619);
  EXPECT_DOUBLE_EQ(h100.at("theoretical_bandwidth_gbs").get<double>(), 3352.32);
  EXPECT_TRUE(j.at("host").at("gpus").at(1).at("theoretical_bandwidth_gbs").is_null());  // no NVML figures

  ASSERT_EQ(j.at("gpus").size(), 2u);
  const auto& measured = j.at("gpus").at(0);
  EXPECT_EQ(measured.at("index"), 0);
  EXPECT_EQ(measured.at("name"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(measured.at("pci_bus_id"), "00000000:19:00.0");
  EXPECT_DOUBLE_EQ(measured.at("copy_bandwidth_gbs").get<double>(), 2890.5);
  EXPECT_DOUBLE_EQ(measured.at("f16_gemm_tflops").get<double>(), 612.25);
  EXPECT_EQ(measured.at("gemm_n"), 8192);
  EXPECT_EQ(measured.at("problem"), "");
  EXPECT_TRUE(j.at("gpus").at(1).at("f16_gemm_tflops").is_null());
  EXPECT_EQ(j.at("gpus").at(1).at("problem"), "f16 GEMM: out of memory");
}

TEST(ProbeJson, ProbeWithoutGpusHasAnEmptyGpuList) {
  HostProbe probe = test::sample_probe();
  probe.host.gpus.clear();
  probe.gpus.clear();
  const auto j = nlohmann::json::parse(host_probe_to_text(probe));
  ASSERT_TRUE(j.at("gpus").is_array());
  EXPECT_TRUE(j.at("gpus").empty());
  EXPECT_TRUE(j.at("host").at("gpus").empty());
}

TEST(ProbeJson, UtcTimestamp) {
  EXPECT_EQ(utc_timestamp(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(utc_timestamp(951782400), "2000-02-29T00:00:00Z");  // a leap day
}

nlohmann::json sample_json() { return nlohmann::json::parse(host_probe_to_text(test::sample_probe())); }

std::string parse_error(const nlohmann::json& j) {
  auto parsed = host_probe_from_json(j);
  return parsed ? std::string("(parsed)") : parsed.error().message;
}

TEST(ProbeJson, RejectsNonJsonAndNonObjects) {
  EXPECT_FALSE(parse_host_probe(""));
  EXPECT_FALSE(parse_host_probe("{\"format\": "));
  EXPECT_FALSE(parse_host_probe("\x01\x02 binary"));
  EXPECT_NE(parse_error(nlohmann::json::array()).find("not an object"), std::string::npos);
}

TEST(ProbeJson, RejectsAnotherFormatOrVersion) {
  auto j = sample_json();
  j["format_version"] = kHostProbeFormatVersion + 1;
  EXPECT_NE(parse_error(j).find("format_version"), std::string::npos);
  j = sample_json();
  j["format"] = "something-else";
  EXPECT_NE(parse_error(j).find("format"), std::string::npos);
}

TEST(ProbeJson, NamesTheMissingOrMistypedField) {
  auto j = sample_json();
  j["bandwidth"]["read_all_cores"].erase("best");
  EXPECT_NE(parse_error(j).find("bandwidth.read_all_cores.best: missing"), std::string::npos) << parse_error(j);

  j = sample_json();
  j["host"]["cpu"]["physical_cores"] = "many";
  EXPECT_NE(parse_error(j).find("host.cpu.physical_cores"), std::string::npos) << parse_error(j);

  j = sample_json();
  j["host"]["numa_nodes"][1]["memory_bytes"] = -5;
  EXPECT_NE(parse_error(j).find("host.numa_nodes[1].memory_bytes"), std::string::npos) << parse_error(j);

  j = sample_json();
  j["host"]["cpu"]["features"] = {"avx", 2};
  EXPECT_NE(parse_error(j).find("host.cpu.features"), std::string::npos) << parse_error(j);

  j = sample_json();
  j["gpus"][0].erase("copy_bandwidth_gbs");
  EXPECT_NE(parse_error(j).find("gpus[0].copy_bandwidth_gbs: missing"), std::string::npos) << parse_error(j);

  j = sample_json();
  j["host"]["gpus"][1]["theoretical_bandwidth_gbs"] = "fast";
  EXPECT_NE(parse_error(j).find("host.gpus[1].theoretical_bandwidth_gbs: not a number or null"), std::string::npos)
      << parse_error(j);

  j = sample_json();
  j["compute"] = 7;
  EXPECT_NE(parse_error(j).find("compute: not an object"), std::string::npos) << parse_error(j);

  j = sample_json();
  j["host"]["cpu"]["packages"] = 1ull << 40;  // does not fit the field
  EXPECT_NE(parse_error(j).find("host.cpu.packages"), std::string::npos) << parse_error(j);
}

TEST(ProbeJson, IgnoresFieldsItDoesNotKnow) {
  auto j = sample_json();
  j["cached"] = true;  // what `infertune probe --json` adds
  j["host"]["future_field"] = {1, 2, 3};
  auto parsed = host_probe_from_json(j);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(*parsed, test::sample_probe());
}

TEST(JsonFields, KeepsTheFirstProblemOnly) {
  const auto j = nlohmann::json::parse(R"({"a": "x", "b": 1.5, "n": -1})");
  std::string error;
  JsonFields f(j, "root", &error);
  double a = 0;
  unsigned n = 0;
  f.get("a", a);
  f.get("n", n);
  EXPECT_EQ(error, "root.a: not a number");
  double b = 0;
  f.get("b", b);
  EXPECT_EQ(b, 1.5);
}

}  // namespace
}  // namespace infertune
