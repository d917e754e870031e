#include "sweeps/spec/spec_yaml.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

namespace infertune {

namespace {

std::string where(const std::string& source, const YAML::Node& node, const std::string& key) {
  return fmt::format("{}:{}: {}", source, node.Mark().line + 1, key);
}

// A scalar is one occurrence; a list gives one occurrence per item (each may be a comma list or range).
Result<SpecEntry> entry(const std::string& source, const std::string& key, const YAML::Node& value) {
  SpecEntry e{.values = {}, .where = where(source, value, key)};
  if (value.IsScalar()) {
    e.values.push_back(value.Scalar());
  } else if (value.IsSequence()) {
    for (const auto& item : value) {
      if (!item.IsScalar()) return fail("{}: list items must be values", where(source, item, key));
      e.values.push_back(item.Scalar());
    }
    if (e.values.empty()) return fail("{}: empty list", e.where);
  } else {
    return fail("{}: expected a value or a list of values", e.where);
  }
  return e;
}

Result<SpecText::WorkloadText> workload(const std::string& source, const YAML::Node& item, size_t index) {
  const std::string key = fmt::format("workloads[{}]", index);
  SpecText::WorkloadText w{.fields = {}, .where = where(source, item, key)};
  if (!item.IsMap()) return fail("{}: expected a map such as {{pp: 512, tg: 128}}", w.where);
  for (const auto& field : item) {
    const std::string name = field.first.Scalar();
    if (field.second.IsScalar()) {
      w.fields[name] = field.second.Scalar();
    } else if (field.second.IsSequence() && (name == "np" || name == "clients")) {
      std::string joined;
      for (const auto& v : field.second) joined += (joined.empty() ? "" : ",") + v.Scalar();
      w.fields[name] = joined;
    } else {
      return fail("{}.{}: expected a value", where(source, field.second, key), name);
    }
  }
  return w;
}

Result<SpecText> convert(const YAML::Node& root, const std::string& source) {
  SpecText text;
  if (root.IsNull()) return text;
  if (!root.IsMap()) return fail("{}:{}: a sweep spec is a map of keys", source, root.Mark().line + 1);
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    if (key == "workloads") {
      if (!kv.second.IsSequence()) return fail("{}: expected a list of workloads", where(source, kv.second, key));
      size_t i = 0;
      for (const auto& item : kv.second) {
        auto w = workload(source, item, i++);
        if (!w) return w.error();
        text.workloads.push_back(std::move(*w));
      }
      continue;
    }
    if (!is_spec_key(key)) return fail("{}: unknown key '{}'", where(source, kv.first, key), key);
    auto e = entry(source, key, kv.second);
    if (!e) return e.error();
    text.entries[key] = std::move(*e);
  }
  return text;
}

}  // namespace

Result<SpecText> parse_spec_yaml(std::string_view yaml, const std::string& source_name) {
  // yaml-cpp reports errors by exception; they stop here and become an Error with the line.
  try {
    return convert(YAML::Load(std::string(yaml)), source_name);
  } catch (const YAML::Exception& e) {
    return fail("{}:{}:{}: YAML: {}", source_name, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
}

Result<SpecText> read_spec_yaml(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail("cannot read sweep spec '{}'", path);
  std::ostringstream text;
  text << in.rdbuf();
  return parse_spec_yaml(text.str(), path);
}

}  // namespace infertune
