// Filecoin .params keys in the engine: loading one with its constraint system, checking a witness
// for it, and its batches as runs of the assignment workload (engine.hpp says how they differ).
#include "engine/engine_impl.hpp"

#include "groth16/verify.hpp"

namespace stagehand::engine {

namespace {

// InputError naming both files where the constraint system is not the key's circuit's: its
// public inputs, its aux wires, then (through an assignment of zeros, whose bitmaps are the
// circuit's) its A and B columns and its rows against the key's queries and domain.
void check_params_r1cs(const groth16::ParamsKey& key, const std::filesystem::path& params_path,
                       const groth16::R1cs& r1cs, const std::filesystem::path& r1cs_path) {
  const auto both = [&](const std::string& what) {
    return groth16::InputError(
        fmt::format("{} is not the circuit of {}: {}", r1cs_path.string(), params_path.string(), what));
  };
  const std::uint64_t inputs = 1 + std::uint64_t{r1cs.n_public()};
  if (inputs != key.input_count()) {
    throw both(fmt::format("{} inputs (the constant one and {} public signals), the key's verifying key has {}", inputs,
                           r1cs.n_public(), key.input_count()));
  }
  if (r1cs.n_wires < inputs || r1cs.n_wires - inputs != key.aux_count()) {
    throw both(fmt::format("{} wires, {} of them aux, the key has {} aux points (l)", r1cs.n_wires,
                           r1cs.n_wires < inputs ? 0 : r1cs.n_wires - inputs, key.aux_count()));
  }
  try {
    const std::vector<math::Fr> zeros(r1cs.n_wires, math::Fr::zero());
    groth16::check_assignment(key, groth16::circuit_assignment(r1cs, zeros).view(), 0);
  } catch (const std::exception& error) {
    throw both(error.what());
  }
}

std::uint64_t params_host_bytes(const ParamsHeld& held) {
  const auto& key = held.key;
  std::uint64_t bytes = key.h.bytes().size() + key.l.bytes().size() + key.a.bytes().size() + key.b_g1.bytes().size() +
                        key.b_g2.bytes().size() + key.vk.ic.size() * sizeof(key.vk.ic[0]);
  for (const auto& constraint : held.r1cs.constraints) {
    bytes += (constraint.a.size() + constraint.b.size() + constraint.c.size()) * sizeof(groth16::Term);
  }
  return bytes;
}

// A witness's assignment for the key: InputError naming the witness where it is not the
// circuit's or does not satisfy every constraint (its proof would not verify).
groth16::CircuitAssignment witness_assignment(const ParamsHeld& held, const ProofRecord& record, unsigned threads) {
  STAGEHAND_ASSERT(record.wtns != nullptr, "proof {} reached its run without its witness", record.id);
  const auto witness = groth16::parse_wtns(*record.wtns, record.name, threads);
  try {
    auto assignment = groth16::circuit_assignment(held.r1cs, witness);
    if (const auto row = groth16::first_unsatisfied_constraint(held.r1cs, witness)) {
      throw groth16::InputError(fmt::format("the witness does not satisfy constraint {}", *row));
    }
    groth16::check_assignment(held.key, assignment.view(), 0);
    return assignment;
  } catch (const std::exception& error) {
    throw groth16::InputError(fmt::format("{} with {}: {}", record.name, held.r1cs_path.string(), error.what()));
  }
}

}  // namespace

void Engine::load_params_key(const std::string& name, const std::filesystem::path& params_path,
                             const std::filesystem::path& r1cs_path) {
  groth16::InputFile params, r1cs;
  try {
    params = groth16::open_input(params_path, "Filecoin parameters (.params)");
    r1cs = groth16::open_input(r1cs_path, "circom constraint system (.r1cs)");
  } catch (const std::exception& error) {
    throw EngineError(ErrorKind::bad_key, error.what());
  }
  load_params_key(name, std::move(params), std::move(r1cs));
}

void Engine::load_params_key(const std::string& name, groth16::InputFile params, groth16::InputFile r1cs) {
  impl_->check_loadable(name);
  const auto start = Clock::now();
  const auto params_path = params.name;
  Impl::Key entry;
  try {
    auto held = std::make_shared<ParamsHeld>();
    held->r1cs_path = r1cs.name;
    held->key = groth16::read_params(std::move(params));
    held->r1cs = groth16::read_r1cs(std::move(r1cs), fmt::format("the key {} is BLS12-381's", params_path.string()));
    check_params_r1cs(held->key, params_path, held->r1cs, held->r1cs_path);
    // A key no device can prove, even with every set streamed, is refused now, naming it.
    const auto settings = settings_for(impl_->config.run, impl_->config.engine.policy);
    const auto layout = groth16::plan_assignment_layout(
        held->key, impl_->backend->devices(), settings.safety_margin_bytes + settings.resident_bytes,
        settings.workers_per_device, impl_->config.engine.stream_buffer_bytes);
    entry.layout =
        fmt::format("assignments ({} inputs, {} aux, domain {}); {}", held->key.input_count(), held->key.aux_count(),
                    held->key.domain_size(), groth16::describe_assignment_layout(layout));
    entry.host_bytes = params_host_bytes(*held);
    entry.r1cs_path = held->r1cs_path;
    entry.params = std::move(held);
  } catch (const std::exception& error) {
    throw EngineError(ErrorKind::bad_key, error.what());
  }
  entry.key = std::shared_ptr<const groth16::ProvingKey>();  // a .params key has no .zkey key
  entry.path = params_path;
  entry.read_seconds = seconds_between(start, Clock::now());
  std::lock_guard lock(impl_->mutex);
  impl_->check_loadable_locked(name);
  impl_->keys.emplace(name, std::move(entry));
}

void check_params_witness(const ParamsHeld& held, std::span<const std::uint8_t> wtns, const std::string& name,
                          unsigned threads) {
  const std::uint32_t count = groth16::check_wtns(wtns, name, threads);
  if (count != held.r1cs.n_wires) {
    throw groth16::InputError(fmt::format("{}: {} values, but the circuit {} has {} wires", name, count,
                                          held.r1cs_path.string(), held.r1cs.n_wires));
  }
}

void Engine::Impl::run_params_batch(const BatchOf& of, std::vector<std::shared_ptr<ProofRecord>> batch) {
  STAGEHAND_ASSERT(of.params != nullptr && !batch.empty(), "a .params batch of key {} without its key or proofs",
                   of.name);
  std::vector<std::shared_ptr<ProofRecord>> records;
  std::vector<groth16::CircuitAssignment> assignments;
  assignments.reserve(batch.size());  // the run's views point into them
  for (auto& record : batch) {
    try {
      assignments.push_back(witness_assignment(*of.params, *record, config.engine.threads));
      records.push_back(std::move(record));
    } catch (const std::exception& error) {
      EngineBatch alone(*this, of.name, {record});
      alone.end_rest(error.what());
    }
  }
  if (!records.empty()) prove_params_batch(of, records, assignments);
  run_ended();
}

void Engine::Impl::prove_params_batch(const BatchOf& of, const std::vector<std::shared_ptr<ProofRecord>>& records,
                                      const std::vector<groth16::CircuitAssignment>& assignments) {
  STAGEHAND_ASSERT(records.size() == assignments.size(), "{} proofs of key {} with {} assignments", records.size(),
                   of.name, assignments.size());
  EngineBatch listener(*this, of.name, records);
  try {
    std::vector<groth16::AssignmentView> views;
    std::vector<groth16::ProofRandomness> randomness;
    for (std::size_t i = 0; i < records.size(); ++i) {
      views.push_back(assignments[i].view());
      // As `stagehand prove --params --seed`: its seed plus the proof's number.
      const auto& seed = config.engine.seed;
      randomness.push_back(seed ? groth16::ProofRandomness::from_seed(*seed + records[i]->seed_index)
                                : groth16::ProofRandomness::from_system());
    }
    proving::AssignmentBatchSettings settings;
    settings.coordinator = settings_for(config.run, config.engine.policy);
    settings.coordinator.first_device = static_cast<int>(batch_number() % backend->devices().size());
    settings.verify = true;  // every proof pairing-checked, as the C ABI's
    settings.threads = config.engine.threads;
    settings.stream_buffer_bytes = config.engine.stream_buffer_bytes;
    if (config.engine.keep_key_on_device) settings.key_state = of.assignment_state;
    settings.listener = &listener;
    settings.host_steps_off_thread = backend->on_gpu();
    backend->run([&]() -> asio::awaitable<void> {
      co_await proving::run_assignment_jobs(backend->devices(), of.params->key, views, randomness, settings);
    }());
  } catch (const std::exception& error) {
    listener.end_rest(fmt::format("the run failed: {}", error.what()));
  }
  listener.end_rest("the run ended without reporting this proof");
}

}  // namespace stagehand::engine
