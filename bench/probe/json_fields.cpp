#include "bench/probe/json_fields.h"

#include <limits>

namespace infertune {
namespace {

const nlohmann::json& empty_object() {
  static const nlohmann::json empty = nlohmann::json::object();
  return empty;
}

// Whether j is a non-negative integer no larger than `max`.
bool unsigned_at_most(const nlohmann::json& j, uint64_t max) {
  if (j.is_number_unsigned()) return j.get<uint64_t>() <= max;
  return j.is_number_integer() && j.get<int64_t>() >= 0 && static_cast<uint64_t>(j.get<int64_t>()) <= max;
}

}  // namespace

JsonFields::JsonFields(const nlohmann::json& object, std::string path, std::string* error)
    : object_(object.is_object() ? object : empty_object()), path_(std::move(path)), error_(error) {
  if (!object.is_object() && error_->empty()) *error_ = (path_.empty() ? "the document" : path_) + ": not an object";
}

std::string JsonFields::path_of(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void JsonFields::problem(std::string_view key, std::string_view what) {
  if (error_->empty()) *error_ = path_of(key) + ": " + std::string(what);
}

const nlohmann::json* JsonFields::field(std::string_view key) {
  const auto it = object_.find(key);
  if (it == object_.end()) {
    problem(key, "missing");
    return nullptr;
  }
  return &*it;
}

void JsonFields::get(std::string_view key, std::string& out) {
  const auto* j = field(key);
  if (j && j->is_string()) {
    out = j->get<std::string>();
  } else if (j) {
    problem(key, "not a string");
  }
}

void JsonFields::get(std::string_view key, bool& out) {
  const auto* j = field(key);
  if (j && j->is_boolean()) {
    out = j->get<bool>();
  } else if (j) {
    problem(key, "not true or false");
  }
}

void JsonFields::get(std::string_view key, double& out) {
  const auto* j = field(key);
  if (j && j->is_number()) {
    out = j->get<double>();
  } else if (j) {
    problem(key, "not a number");
  }
}

void JsonFields::get(std::string_view key, std::optional<double>& out) {
  const auto* j = field(key);
  if (j && j->is_null()) {
    out.reset();
  } else if (j && j->is_number()) {
    out = j->get<double>();
  } else if (j) {
    problem(key, "not a number or null");
  }
}

void JsonFields::get(std::string_view key, int64_t& out) {
  const auto* j = field(key);
  if (j && j->is_number_integer() &&
      (!j->is_number_unsigned() || j->get<uint64_t>() <= uint64_t(std::numeric_limits<int64_t>::max()))) {
    out = j->get<int64_t>();
  } else if (j) {
    problem(key, "not a 64-bit integer");
  }
}

void JsonFields::get(std::string_view key, uint64_t& out) {
  const auto* j = field(key);
  if (j && unsigned_at_most(*j, std::numeric_limits<uint64_t>::max())) {
    out = j->get<uint64_t>();
  } else if (j) {
    problem(key, "not a non-negative integer");
  }
}

void JsonFields::get(std::string_view key, unsigned& out) {
  const auto* j = field(key);
  if (j && unsigned_at_most(*j, std::numeric_limits<unsigned>::max())) {
    out = j->get<unsigned>();
  } else if (j) {
    problem(key, "not a non-negative 32-bit integer");
  }
}

void JsonFields::get(std::string_view key, int& out) {
  const auto* j = field(key);
  if (j && j->is_number_integer() && !j->is_number_unsigned() && j->get<int64_t>() >= std::numeric_limits<int>::min() &&
      j->get<int64_t>() <= std::numeric_limits<int>::max()) {
    out = j->get<int>();
  } else if (j && unsigned_at_most(*j, std::numeric_limits<int>::max())) {
    out = static_cast<int>(j->get<uint64_t>());
  } else if (j) {
    problem(key, "not a 32-bit integer");
  }
}

void JsonFields::get(std::string_view key, std::vector<std::string>& out) {
  const auto* j = field(key);
  if (!j) return;
  if (!j->is_array()) return problem(key, "not an array");
  out.clear();
  for (const auto& item : *j) {
    if (!item.is_string()) return problem(key, "has an item that is not a string");
    out.push_back(item.get<std::string>());
  }
}

JsonFields JsonFields::object(std::string_view key) {
  const auto* j = field(key);
  if (j && !j->is_object()) problem(key, "not an object");
  return JsonFields(j && j->is_object() ? *j : empty_object(), path_of(key), error_);
}

std::vector<JsonFields> JsonFields::objects(std::string_view key) {
  std::vector<JsonFields> out;
  const auto* j = field(key);
  if (!j) return out;
  if (!j->is_array()) {
    problem(key, "not an array");
    return out;
  }
  for (size_t i = 0; i < j->size(); ++i)
    out.emplace_back((*j)[i], path_of(key) + "[" + std::to_string(i) + "]", error_);
  return out;
}

}  // namespace infertune
