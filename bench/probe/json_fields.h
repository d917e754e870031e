#pragma once
// Reads typed fields out of parsed JSON without exceptions: every field is checked for presence and type,
// and the first problem is kept with the field's path ("bandwidth.read_all_cores.best: not a number") so
// a caller can reject a damaged file with one clear message.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace infertune {

class JsonFields {
 public:
  // `error` collects the first problem of this reader and of every reader derived from it.
  JsonFields(const nlohmann::json& object, std::string path, std::string* error);

  void get(std::string_view key, std::string& out);
  void get(std::string_view key, bool& out);
  void get(std::string_view key, double& out);
  // A number, or null for "not known" (nullopt).
  void get(std::string_view key, std::optional<double>& out);
  void get(std::string_view key, int64_t& out);
  void get(std::string_view key, uint64_t& out);
  void get(std::string_view key, unsigned& out);
  void get(std::string_view key, int& out);
  void get(std::string_view key, std::vector<std::string>& out);

  // A nested object, or (after recording an error) a reader over an empty object.
  JsonFields object(std::string_view key);
  // The objects of an array field.
  std::vector<JsonFields> objects(std::string_view key);

 private:
  const nlohmann::json* field(std::string_view key);  // null (with the error recorded) when missing
  void problem(std::string_view key, std::string_view what);
  std::string path_of(std::string_view key) const;

  const nlohmann::json& object_;
  std::string path_;
  std::string* error_;
};

}  // namespace infertune
