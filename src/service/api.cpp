#include "service/api.hpp"

#include "service/key_files.hpp"
#include "service/status_json.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <optional>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <unistd.h>

namespace stagehand::service {
namespace {

using engine::EngineError;
using engine::ErrorKind;
using engine::ProofState;
using nlohmann::json;

HttpResponse json_response(unsigned status, const json& body) {
  HttpResponse response;
  response.status = status;
  response.body = body.dump();
  return response;
}

unsigned status_of(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::unknown_key: return 404;
    case ErrorKind::unknown_proof: return 404;
    case ErrorKind::key_exists: return 409;
    case ErrorKind::bad_key: return 400;
    case ErrorKind::bad_witness: return 400;
    case ErrorKind::queue_full: return 429;
    case ErrorKind::stopped: return 503;
    case ErrorKind::no_gpu: return 503;
    case ErrorKind::bad_request: return 400;
    case ErrorKind::deadline_passed: return 400;
    case ErrorKind::request_conflict: return 409;
  }
  return 500;
}

HttpResponse engine_error(const EngineError& error) {
  auto response = error_response(status_of(error.kind()), error.what());
  // The queue drains at the proofs' pace: try again in a second. A stopping engine will not come back.
  if (error.kind() == ErrorKind::queue_full) response.headers.emplace_back("Retry-After", "1");
  return response;
}

// Names of keys: letters, digits, '.', '_' and '-', so that they need no escaping anywhere.
bool valid_key_name(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) return false;
  }
  return true;
}

std::string percent_decoded(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      int value = 0;
      const auto [end, error] = std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16);
      if (error == std::errc() && end == text.data() + i + 3) {
        out += static_cast<char>(value);
        i += 2;
        continue;
      }
    }
    out += text[i] == '+' ? ' ' : text[i];
  }
  return out;
}

std::map<std::string, std::string, std::less<>> query_parameters(std::string_view query) {
  std::map<std::string, std::string, std::less<>> parameters;
  while (!query.empty()) {
    const auto amp = query.find('&');
    const auto pair = query.substr(0, amp);
    const auto eq = pair.find('=');
    if (!pair.empty()) {
      parameters[percent_decoded(pair.substr(0, eq))] =
          eq == std::string_view::npos ? "" : percent_decoded(pair.substr(eq + 1));
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return parameters;
}

std::optional<std::uint64_t> parse_id(std::string_view text) {
  std::uint64_t id = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return id;
}

json timings_json(const engine::ProofTimings& timings) {
  return json{
      {"queue_s", timings.queue_s}, {"setup_s", timings.setup_s},           {"host_before_s", timings.host_before_s},
      {"gpu_s", timings.gpu_s},     {"host_after_s", timings.host_after_s}, {"check_s", timings.check_s},
      {"total_s", timings.total_s}};
}

// The proof's JSON for GET, for wait=true and for a submit's answer.
json proof_body(const engine::ProofHandle& handle, const engine::ProofResult& result) {
  json body{{"id", std::to_string(handle.id())},
            {"key", handle.key()},
            {"state", engine::to_string(result.state)},
            {"priority", engine::to_string(handle.priority())}};
  if (!handle.request_id().empty()) body["request_id"] = handle.request_id();
  if (handle.repeated()) body["repeated"] = true;
  if (result.state == ProofState::done) {
    body["proof"] = json::parse(result.proof_json);
    body["public"] = json::parse(result.public_json);
  }
  if (!result.error.empty()) body["error"] = fmt::format("proof {}: {}", handle.id(), result.error);
  if (result.deadline_missed) body["deadline_missed"] = true;
  if (result.state != ProofState::queued && result.state != ProofState::running) {
    body["seconds"] = result.seconds;
    body["timings"] = timings_json(result.timings);
  }
  return body;
}

// A Prometheus label value: backslash, double quote and newline escaped.
std::string label_value(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// The submit's options from its query: priority, request_id, deadline_ms (whole milliseconds
// from the request's arrival; zero or less is a deadline already past, refused by the engine).
// Nothing, with `error` set, when one is malformed.
std::optional<engine::SubmitOptions> submit_options(const std::map<std::string, std::string, std::less<>>& parameters,
                                                    std::string& error) {
  engine::SubmitOptions options;
  if (auto found = parameters.find("priority"); found != parameters.end()) {
    const auto priority = engine::priority_from_string(found->second);
    if (!priority) {
      error = fmt::format("priority={}: expected critical, high, normal or low", found->second);
      return std::nullopt;
    }
    options.priority = *priority;
  }
  if (auto found = parameters.find("request_id"); found != parameters.end()) {
    if (found->second.empty()) {
      error = "request_id= is empty: leave it out, or name the request";
      return std::nullopt;
    }
    options.request_id = found->second;
  }
  if (auto found = parameters.find("deadline_ms"); found != parameters.end()) {
    std::int64_t ms = 0;
    const auto& text = found->second;
    const auto [end, parsed] = std::from_chars(text.data(), text.data() + text.size(), ms);
    if (parsed != std::errc() || end != text.data() + text.size() || text.empty()) {
      error = fmt::format("deadline_ms={}: expected whole milliseconds from now", text);
      return std::nullopt;
    }
    options.deadline = engine::deadline_in(ms);
  }
  return options;
}

// GET's wait=SECONDS: a finite number from 0 up, in seconds (fractions allowed); nothing where malformed.
std::optional<double> wait_seconds(const std::string& text) {
  double seconds = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (!std::isfinite(seconds) || seconds < 0) return std::nullopt;
  return seconds;
}

// A temporary file for a key sent as bytes: the engine reads keys from files, once.
class TemporaryFile {
 public:
  explicit TemporaryFile(const std::vector<std::uint8_t>& bytes) {
    auto pattern = (std::filesystem::temp_directory_path() / "stagehand-key-XXXXXX").string();
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0)
      throw std::runtime_error(fmt::format("cannot make a temporary file for the key: {}", std::strerror(errno)));
    path_ = pattern;
    std::size_t written = 0;
    while (written < bytes.size()) {
      const auto count = ::write(fd, bytes.data() + written, bytes.size() - written);
      if (count <= 0) {
        ::close(fd);
        std::filesystem::remove(path_);
        throw std::runtime_error(fmt::format("cannot write the key to {}: {}", path_.string(), std::strerror(errno)));
      }
      written += static_cast<std::size_t>(count);
    }
    ::close(fd);
  }
  ~TemporaryFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace

HttpResponse error_response(unsigned status, const std::string& message) {
  return json_response(status, json{{"error", message}});
}

Api::Api(engine::Engine& engine, engine::ServeSettings settings) : engine_(engine), settings_(settings) {}

Reply Api::handle(HttpRequest request) {
  try {
    return route(request);
  } catch (const EngineError& error) {
    return engine_error(error);
  } catch (const std::exception& error) {
    return error_response(500, fmt::format("{} {}: {}", request.method, request.target, error.what()));
  } catch (...) {
    return error_response(500, fmt::format("{} {}: an unknown error", request.method, request.target));
  }
}

Reply Api::route(HttpRequest& request) {
  std::string_view target = request.target;
  const auto question = target.find('?');
  const std::string_view path = target.substr(0, question);
  const std::string_view query = question == std::string_view::npos ? std::string_view() : target.substr(question + 1);
  const auto& method = request.method;
  auto wrong_method = [&](const char* allowed) -> Reply {
    auto response = error_response(405, fmt::format("{} is not allowed on {} (allowed: {})", method, path, allowed));
    response.headers.emplace_back("Allow", allowed);
    return response;
  };

  if (path == "/v1/status") {
    if (method != "GET") return wrong_method("GET");
    HttpResponse response;
    response.body = engine::status_json(engine_.status());
    return response;
  }
  if (path == "/metrics") {
    if (method != "GET") return wrong_method("GET");
    HttpResponse response;
    response.body = prometheus_metrics(engine_.status());
    response.content_type = "text/plain; version=0.0.4";
    return response;
  }
  constexpr std::string_view keys_prefix = "/v1/keys/";
  if (path.substr(0, keys_prefix.size()) == keys_prefix) {
    const std::string name = percent_decoded(path.substr(keys_prefix.size()));
    if (!valid_key_name(name)) {
      return error_response(400,
                            fmt::format("'{}' is not a key name (1 to 128 letters, digits, '.', '_' or '-')", name));
    }
    if (method == "POST") return load_key(name, request);
    if (method == "DELETE") {
      const auto left = engine_.unload_key(name);
      return json_response(200, json{{"key", name}, {"proofs_left", left}, {"unloaded", left == 0}});
    }
    return wrong_method("POST, DELETE");
  }
  if (path == "/v1/proofs") {
    if (method != "POST") return wrong_method("POST");
    return submit(std::string(query), request);
  }
  constexpr std::string_view proofs_prefix = "/v1/proofs/";
  if (path.substr(0, proofs_prefix.size()) == proofs_prefix) {
    const auto text = path.substr(proofs_prefix.size());
    const auto id = parse_id(text);
    if (!id) return error_response(400, fmt::format("'{}' is not a proof id (a decimal number)", text));
    if (method == "GET") return proof_state(*id, query);
    if (method == "DELETE") return cancel_proof(*id);
    return wrong_method("GET, DELETE");
  }
  return error_response(404, fmt::format("no route {} {} (see `stagehand serve --help`)", method, path));
}

std::optional<HttpResponse> Api::load_key_by_path(const std::string& name, const std::vector<std::uint8_t>& text) {
  constexpr const char* kForms =
      "{\"path\": \"<.zkey on the server>\"} or {\"params\": \"<.params on the server>\", \"r1cs\": \"<its "
      ".r1cs on the server>\"}";
  const auto body = json::parse(text.begin(), text.end(), nullptr, false);
  const auto is_path = [&](const char* field) { return body.contains(field) && body[field].is_string(); };
  if (body.is_discarded() || !body.is_object())
    return error_response(400, fmt::format("the body must be the .zkey's bytes or JSON {}", kForms));
  const bool zkey = body.size() == 1 && is_path("path");
  const bool params = body.size() == 2 && is_path("params") && is_path("r1cs");
  if (!zkey && !params) return error_response(400, fmt::format("the JSON body takes {}", kForms));
  // Every file is checked against [serve] key_dirs before any is read.
  std::vector<groth16::InputFile> files;
  try {
    for (const char* field : zkey ? std::vector{"path"} : std::vector{"params", "r1cs"})
      files.push_back(open_key_path(body[field].get<std::string>(), settings_.key_dirs));
  } catch (const KeyPathRefused& refused) {
    return error_response(refused.status(), refused.what());
  }
  if (zkey) {
    engine_.load_key(name, std::move(files[0]));
  } else {
    engine_.load_params_key(name, std::move(files[0]), std::move(files[1]));
  }
  return std::nullopt;
}

HttpResponse Api::load_key(const std::string& name, const HttpRequest& request) {
  // JSON naming files on the server when it says so or looks so; otherwise the .zkey's bytes.
  const bool is_json =
      request.content_type.find("json") != std::string::npos || (!request.body.empty() && request.body[0] == '{');
  if (is_json) {
    if (auto refused = load_key_by_path(name, request.body)) return *refused;
  } else {
    if (request.body.empty())
      return error_response(400,
                            "an empty body: send the .zkey's bytes or JSON {\"path\": ...} (or {\"params\": "
                            "..., \"r1cs\": ...})");
    TemporaryFile file(request.body);
    try {
      engine_.load_key(name, file.path());
    } catch (const EngineError& error) {
      // The temporary file's name means nothing to the caller: call it the request body.
      std::string message = error.what();
      for (auto at = message.find(file.path().string()); at != std::string::npos;
           at = message.find(file.path().string())) {
        message.replace(at, file.path().string().size(), "the request body");
      }
      throw EngineError(error.kind(), message);
    }
  }
  const auto status = engine_.status();
  for (const auto& key : status.keys) {
    if (key.name == name)
      return json_response(201,
                           json{{"key", name}, {"host_bytes", key.host_bytes}, {"read_seconds", key.read_seconds}});
  }
  return json_response(201, json{{"key", name}});
}

HttpResponse Api::submit(const std::string& query, HttpRequest& request) {
  const auto parameters = query_parameters(query);
  for (const auto& [name, value] : parameters) {
    if (name != "key" && name != "wait" && name != "priority" && name != "request_id" && name != "deadline_ms") {
      return error_response(
          400, fmt::format("unknown query parameter '{}' (key, wait, priority, request_id, deadline_ms)", name));
    }
  }
  const auto key = parameters.find("key");
  if (key == parameters.end() || key->second.empty())
    return error_response(400, "the query must name the key: /v1/proofs?key=NAME");
  bool wait = false;
  if (auto found = parameters.find("wait"); found != parameters.end()) {
    if (found->second != "true" && found->second != "false") {
      return error_response(400, fmt::format("wait={}: expected true or false", found->second));
    }
    wait = found->second == "true";
  }
  std::string malformed;
  auto options = submit_options(parameters, malformed);
  if (!options) return error_response(400, malformed);
  auto handle = engine_.submit(key->second, std::move(request.body), std::move(*options));
  if (!wait) return json_response(202, proof_body(handle, handle.result()));
  const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(settings_.request_timeout_s * 1000));
  const auto result = handle.wait_for(timeout);
  if (!result) {
    return json_response(
        504,
        json{{"id", std::to_string(handle.id())},
             {"error", fmt::format("proof {} is not done after {} s (serve.request_timeout_s); GET /v1/proofs/{} later",
                                   handle.id(), settings_.request_timeout_s, handle.id())}});
  }
  const unsigned status = result->state == ProofState::done        ? 200
                          : result->state == ProofState::cancelled ? 409
                          : result->engine_stopped                 ? 503
                          : result->deadline_missed                ? 410
                                                                   : 500;
  return json_response(status, proof_body(handle, *result));
}

HttpResponse proof_response(const engine::ProofHandle& proof) {
  return json_response(200, proof_body(proof, proof.result()));
}

Reply Api::proof_state(std::uint64_t id, std::string_view query) {
  const auto parameters = query_parameters(query);
  for (const auto& [name, value] : parameters) {
    if (name != "wait") return error_response(400, fmt::format("unknown query parameter '{}' (wait)", name));
  }
  std::optional<double> wait_s;
  if (auto found = parameters.find("wait"); found != parameters.end()) {
    wait_s = wait_seconds(found->second);
    if (!wait_s) {
      return error_response(
          400, fmt::format("wait={}: expected the seconds to wait for the proof's end, a number from 0 (waits above "
                           "serve.request_timeout_s, {} s, are cut to it)",
                           found->second, settings_.request_timeout_s));
    }
  }
  auto handle = engine_.find(id);
  if (!wait_s || *wait_s == 0 || handle.finished()) return proof_response(handle);
  const std::chrono::duration<double> most(std::min(*wait_s, settings_.request_timeout_s));
  return ProofWait{std::move(handle), std::chrono::duration_cast<std::chrono::steady_clock::duration>(most)};
}

HttpResponse Api::cancel_proof(std::uint64_t id) {
  auto handle = engine_.find(id);
  if (!engine_.cancel(id)) {
    return error_response(
        409, fmt::format("proof {} has ended ({}): nothing to cancel", id, engine::to_string(handle.state())));
  }
  return json_response(
      200, json{{"id", std::to_string(id)}, {"cancelled", true}, {"state", engine::to_string(handle.state())}});
}

namespace {

void append_metric_head(std::string& out, const char* name, const char* type, const char* help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

// The queue's depth by priority class and the timing histograms by key, priority and part.
void append_priority_metrics(std::string& out, const engine::EngineStatus& status) {
  append_metric_head(out, "stagehand_queue_depth_by_priority", "gauge",
                     "Proofs accepted and not yet running, by the priority they were submitted with.");
  for (const auto priority :
       {engine::Priority::critical, engine::Priority::high, engine::Priority::normal, engine::Priority::low}) {
    out += fmt::format("stagehand_queue_depth_by_priority{{priority=\"{}\"}} {}\n", engine::to_string(priority),
                       status.queued_by_priority.at(static_cast<std::size_t>(priority)));
  }
  append_metric_head(
      out, "stagehand_proof_timing_seconds", "histogram",
      "Each part of the life of the proofs that were done or failed (queue, setup, host_before, gpu, host_after, "
      "check, and their total), by key and priority.");
  for (const auto& histogram : status.timing_histograms) {
    const auto labels = fmt::format("key=\"{}\",priority=\"{}\",part=\"{}\"", label_value(histogram.key),
                                    engine::to_string(histogram.priority), histogram.part);
    for (std::size_t i = 0; i < status.timing_bounds.size(); ++i) {
      out += fmt::format("stagehand_proof_timing_seconds_bucket{{{},le=\"{}\"}} {}\n", labels, status.timing_bounds[i],
                         histogram.counts.at(i));
    }
    const auto count = histogram.counts.empty() ? 0 : histogram.counts.back();
    out += fmt::format("stagehand_proof_timing_seconds_bucket{{{},le=\"+Inf\"}} {}\n", labels, count);
    out += fmt::format("stagehand_proof_timing_seconds_sum{{{}}} {:.6f}\n", labels, histogram.sum);
    out += fmt::format("stagehand_proof_timing_seconds_count{{{}}} {}\n", labels, count);
  }
}

}  // namespace

std::string prometheus_metrics(const engine::EngineStatus& status) {
  std::string out;
  auto metric = [&](const char* name, const char* type, const char* help) {
    append_metric_head(out, name, type, help);
  };
  metric("stagehand_proofs_accepted_total", "counter", "Proofs accepted into the queue.");
  out += fmt::format("stagehand_proofs_accepted_total {}\n", status.accepted);
  metric("stagehand_proofs_total", "counter", "Proofs that ended, by outcome.");
  out += fmt::format("stagehand_proofs_total{{outcome=\"done\"}} {}\n", status.done);
  out += fmt::format("stagehand_proofs_total{{outcome=\"failed\"}} {}\n", status.failed);
  out += fmt::format("stagehand_proofs_total{{outcome=\"cancelled\"}} {}\n", status.cancelled);
  metric("stagehand_queue_depth", "gauge", "Proofs accepted and not yet running.");
  out += fmt::format("stagehand_queue_depth {}\n", status.queued);
  metric("stagehand_queue_capacity", "gauge", "The queue's capacity (engine.queue_capacity).");
  out += fmt::format("stagehand_queue_capacity {}\n", status.queue_capacity);
  metric("stagehand_proofs_running", "gauge", "Proofs handed to the GPUs and not yet ended.");
  out += fmt::format("stagehand_proofs_running {}\n", status.running);
  metric("stagehand_witness_bytes", "gauge", "The witnesses' bytes held for queued and running proofs.");
  out += fmt::format("stagehand_witness_bytes {}\n", status.witness_bytes);
  metric("stagehand_keys_loaded", "gauge", "Proving keys held in host memory.");
  out += fmt::format("stagehand_keys_loaded {}\n", status.keys.size());
  metric("stagehand_gpu_busy_seconds_total", "counter", "Wall seconds with at least one proof running on the GPU.");
  for (const auto& gpu : status.gpus)
    out += fmt::format("stagehand_gpu_busy_seconds_total{{gpu=\"{}\"}} {:.6f}\n", gpu.index, gpu.busy_seconds);
  metric("stagehand_gpu_busy_ratio", "gauge", "The GPU's busy seconds over the engine's uptime.");
  for (const auto& gpu : status.gpus) {
    out += fmt::format("stagehand_gpu_busy_ratio{{gpu=\"{}\"}} {:.6f}\n", gpu.index,
                       status.uptime_seconds > 0 ? gpu.busy_seconds / status.uptime_seconds : 0.0);
  }
  metric("stagehand_gpu_proofs_running", "gauge",
         "Proofs between their host step before the GPU and their end, by GPU.");
  for (const auto& gpu : status.gpus)
    out += fmt::format("stagehand_gpu_proofs_running{{gpu=\"{}\"}} {}\n", gpu.index, gpu.running);
  metric("stagehand_gpu_vram_reserved_bytes", "gauge", "Device memory the VRAM budget had reserved when last sampled.");
  for (const auto& gpu : status.gpus)
    out += fmt::format("stagehand_gpu_vram_reserved_bytes{{gpu=\"{}\"}} {}\n", gpu.index, gpu.vram_reserved_bytes);
  metric("stagehand_gpu_vram_capacity_bytes", "gauge", "The device memory the GPU offers (its cap where one is set).");
  for (const auto& gpu : status.gpus)
    out += fmt::format("stagehand_gpu_vram_capacity_bytes{{gpu=\"{}\"}} {}\n", gpu.index, gpu.vram_capacity_bytes);
  metric("stagehand_gpu_pinned_kept_bytes", "gauge",
         "Pinned staging and result buffers kept for the GPU's next batch (freed when a key is unloaded).");
  for (const auto& gpu : status.gpus)
    out += fmt::format("stagehand_gpu_pinned_kept_bytes{{gpu=\"{}\"}} {}\n", gpu.index, gpu.pinned_host_kept_bytes);
  metric("stagehand_gpu_pinned_allocations_total", "counter",
         "Pinned host buffers made for the GPU (staging and result buffers, a key's upload buffers), when last "
         "sampled.");
  for (const auto& gpu : status.gpus)
    out += fmt::format("stagehand_gpu_pinned_allocations_total{{gpu=\"{}\"}} {}\n", gpu.index,
                       gpu.pinned_host_allocations);
  metric("stagehand_proof_seconds", "histogram",
         "Seconds from submit to the end of each proof that was done or failed.");
  for (std::size_t i = 0; i < status.histogram_bounds.size(); ++i) {
    out += fmt::format("stagehand_proof_seconds_bucket{{le=\"{}\"}} {}\n", status.histogram_bounds[i],
                       status.histogram_counts.at(i));
  }
  const auto count = status.histogram_counts.empty() ? 0 : status.histogram_counts.back();
  out += fmt::format("stagehand_proof_seconds_bucket{{le=\"+Inf\"}} {}\n", count);
  out += fmt::format("stagehand_proof_seconds_sum {:.6f}\n", status.histogram_sum);
  out += fmt::format("stagehand_proof_seconds_count {}\n", count);
  append_priority_metrics(out, status);
  return out;
}

}  // namespace stagehand::service
