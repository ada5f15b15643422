#pragma once
// The engine's status (Engine::status) as JSON: `stagehand serve`'s GET /v1/status and the C ABI's
// stagehand_status_json answer the same text from here. In the engine's namespace, beside
// EngineStatus, so that callers find it as they find the status itself.

#include "engine/engine.hpp"

#include <string>

namespace stagehand::engine {

std::string status_json(const EngineStatus& status);

}  // namespace stagehand::engine
