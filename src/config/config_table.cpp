#include "config/config_table.hpp"

#include "util/input_file.hpp"

#include <fmt/format.h>

namespace stagehand {
namespace {

// Far more than any configuration or fixture holds; a larger input is not one.
constexpr std::uint64_t kMaxConfigBytes = std::uint64_t{16} << 20;

std::string_view type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    default: return "a date or time";
  }
}
}  // namespace

ConfigTable::ConfigTable(const toml::table& table, std::shared_ptr<const std::string> file, std::string prefix)
    : table_(&table),
      file_(std::move(file)),
      prefix_(std::move(prefix)),
      read_(std::make_shared<std::set<std::string>>()) {}

std::string ConfigTable::full_key(std::string_view key) const {
  return prefix_.empty() ? std::string(key) : fmt::format("{}.{}", prefix_, key);
}

std::string ConfigTable::where(std::string_view key) const {
  const toml::node* node = table_->get(key);
  auto line = node != nullptr ? node->source().begin.line : table_->source().begin.line;
  if (line == 0) return fmt::format("{}: key '{}'", *file_, full_key(key));
  return fmt::format("{}:{}: key '{}'", *file_, line, full_key(key));
}

void ConfigTable::fail(std::string_view key, std::string_view problem) const {
  throw ConfigError(fmt::format("{}: {}", where(key), problem));
}

void ConfigTable::wrong_type(std::string_view key, const toml::node& node, std::string_view expected) const {
  fail(key, fmt::format("expected {}, found {}", expected, type_name(node)));
}

const toml::node* ConfigTable::find(std::string_view key) const {
  read_->insert(std::string(key));
  return table_->get(key);
}

std::optional<std::int64_t> ConfigTable::integer(std::string_view key) const {
  const auto* node = find(key);
  if (node == nullptr) return std::nullopt;
  if (!node->is_integer()) wrong_type(key, *node, "an integer");
  return node->as_integer()->get();
}

std::optional<double> ConfigTable::number(std::string_view key) const {
  const auto* node = find(key);
  if (node == nullptr) return std::nullopt;
  if (node->is_integer()) return static_cast<double>(node->as_integer()->get());
  if (!node->is_floating_point()) wrong_type(key, *node, "a number");
  return node->as_floating_point()->get();
}

std::optional<bool> ConfigTable::boolean(std::string_view key) const {
  const auto* node = find(key);
  if (node == nullptr) return std::nullopt;
  if (!node->is_boolean()) wrong_type(key, *node, "true or false");
  return node->as_boolean()->get();
}

std::optional<std::string> ConfigTable::string(std::string_view key) const {
  const auto* node = find(key);
  if (node == nullptr) return std::nullopt;
  if (!node->is_string()) wrong_type(key, *node, "a string");
  return node->as_string()->get();
}

std::optional<std::vector<std::string>> ConfigTable::string_array(std::string_view key) const {
  const auto* node = find(key);
  if (node == nullptr) return std::nullopt;
  if (!node->is_array()) wrong_type(key, *node, "an array of strings");
  std::vector<std::string> values;
  for (const auto& element : *node->as_array()) {
    if (!element.is_string()) wrong_type(key, element, "an array of strings");
    values.push_back(element.as_string()->get());
  }
  return values;
}

std::optional<ConfigTable> ConfigTable::table(std::string_view key) const {
  const auto* node = find(key);
  if (node == nullptr) return std::nullopt;
  if (!node->is_table()) wrong_type(key, *node, "a table");
  return ConfigTable(*node->as_table(), file_, full_key(key));
}

std::int64_t ConfigTable::required_integer(std::string_view key) const {
  auto value = integer(key);
  if (!value) fail(key, "missing (required)");
  return *value;
}

double ConfigTable::required_number(std::string_view key) const {
  auto value = number(key);
  if (!value) fail(key, "missing (required)");
  return *value;
}

std::string ConfigTable::required_string(std::string_view key) const {
  auto value = string(key);
  if (!value) fail(key, "missing (required)");
  return *value;
}

ConfigTable ConfigTable::required_table(std::string_view key) const {
  auto value = table(key);
  if (!value) fail(key, "missing table (required)");
  return *value;
}

double ConfigTable::number_in(std::string_view key, double fallback, double minimum, double maximum) const {
  auto value = number(key).value_or(fallback);
  if (!(value >= minimum && value <= maximum)) {
    fail(key, fmt::format("{} is out of range [{}, {}]", value, minimum, maximum));
  }
  return value;
}

std::int64_t ConfigTable::integer_in(std::string_view key, std::int64_t fallback, std::int64_t minimum,
                                     std::int64_t maximum) const {
  auto value = integer(key).value_or(fallback);
  if (value < minimum || value > maximum)
    fail(key, fmt::format("{} is out of range [{}, {}]", value, minimum, maximum));
  return value;
}

std::string ConfigTable::choice(std::string_view key, std::string fallback,
                                const std::vector<std::string>& choices) const {
  auto value = string(key).value_or(std::move(fallback));
  for (const auto& candidate : choices) {
    if (candidate == value) return value;
  }
  fail(key, fmt::format("'{}' is not one of: {}", value, fmt::join(choices, ", ")));
}

std::vector<std::string> ConfigTable::keys() const {
  std::vector<std::string> names;
  for (const auto& [key, node] : *table_) names.emplace_back(key.str());
  return names;
}

void ConfigTable::reject_unknown_keys() const {
  for (const auto& [key, node] : *table_) {
    if (!read_->contains(std::string(key.str()))) {
      auto line = key.source().begin.line != 0 ? key.source().begin.line : node.source().begin.line;
      throw ConfigError(fmt::format("{}:{}: unknown key '{}'", *file_, line, full_key(key.str())));
    }
  }
}

ConfigDocument ConfigDocument::parse(std::string_view text, std::string source_name) {
  ConfigDocument document;
  document.file_ = std::make_shared<const std::string>(source_name);
  try {
    document.root_ = std::make_shared<toml::table>(toml::parse(text, source_name));
  } catch (const toml::parse_error& error) {
    throw ConfigError(fmt::format("{}:{}:{}: {}", source_name, error.source().begin.line, error.source().begin.column,
                                  error.description()));
  }
  return document;
}

ConfigDocument ConfigDocument::load(const std::filesystem::path& path) {
  // Bounded, and a directory, a device or a FIFO without a writer refused rather than read as
  // empty, endless or waited on.
  const auto input = read_small_input(path, kMaxConfigBytes, "TOML file");
  if (!input.problem.empty()) throw ConfigError(fmt::format("{}: {}", path.string(), input.problem));
  return parse(input.bytes, path.string());
}

}  // namespace stagehand
