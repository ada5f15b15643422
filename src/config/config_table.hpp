#pragma once
// Strict reading of TOML files: every error names the file, the line and the full key, and a
// key that nothing read is an error too (a misspelt setting must never be silently ignored).

#include <toml++/toml.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace stagehand {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ConfigTable {
 public:
  ConfigTable(const toml::table& table, std::shared_ptr<const std::string> file, std::string prefix);

  std::optional<std::int64_t> integer(std::string_view key) const;
  // Accepts integers and floats.
  std::optional<double> number(std::string_view key) const;
  std::optional<bool> boolean(std::string_view key) const;
  std::optional<std::string> string(std::string_view key) const;
  std::optional<std::vector<std::string>> string_array(std::string_view key) const;
  std::optional<ConfigTable> table(std::string_view key) const;

  std::int64_t required_integer(std::string_view key) const;
  double required_number(std::string_view key) const;
  std::string required_string(std::string_view key) const;
  ConfigTable required_table(std::string_view key) const;

  // Range-checked readers: the value must lie in [minimum, maximum].
  double number_in(std::string_view key, double fallback, double minimum, double maximum) const;
  std::int64_t integer_in(std::string_view key, std::int64_t fallback, std::int64_t minimum,
                          std::int64_t maximum) const;
  // One of `choices`.
  std::string choice(std::string_view key, std::string fallback, const std::vector<std::string>& choices) const;

  bool contains(std::string_view key) const { return table_->contains(key); }
  std::vector<std::string> keys() const;
  // Marks a key as read without reading it (a key handled elsewhere).
  void accept(std::string_view key) const { read_->insert(std::string(key)); }
  // Throws naming the first key of this table that no reader asked for.
  void reject_unknown_keys() const;

  [[noreturn]] void fail(std::string_view key, std::string_view problem) const;
  // "<file>:<line>: key '<full key>'", as fail() begins its message (for errors found later).
  std::string where(std::string_view key) const;
  const std::string& file() const { return *file_; }
  std::string full_key(std::string_view key) const;

 private:
  const toml::node* find(std::string_view key) const;
  [[noreturn]] void wrong_type(std::string_view key, const toml::node& node, std::string_view expected) const;

  const toml::table* table_;
  std::shared_ptr<const std::string> file_;
  std::string prefix_;
  std::shared_ptr<std::set<std::string>> read_;
};

// A parsed TOML file that owns its tree; `root()` reads from it.
class ConfigDocument {
 public:
  // Throws ConfigError naming the file and line for unreadable files and syntax errors.
  static ConfigDocument load(const std::filesystem::path& path);
  static ConfigDocument parse(std::string_view text, std::string source_name);
  ConfigTable root() const { return ConfigTable(*root_, file_, ""); }

 private:
  std::shared_ptr<toml::table> root_;
  std::shared_ptr<const std::string> file_;
};

}  // namespace stagehand
