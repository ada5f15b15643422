// The VramBudget's rules, one test each, on the simulated H200.
#define BOOST_TEST_MODULE vram_budget
#include <boost/test/unit_test.hpp>

#include "contract/device_contract.hpp"
#include "coordinator/vram_budget.hpp"
#include "support/sim_harness.hpp"
#include "util/assert.hpp"

#include <csignal>
#include <optional>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

using namespace stagehand;
using testing::SimHarness;

namespace {

struct BudgetBench {
  explicit BudgetBench(Bytes capacity, VramBudgetRules rules = {})
      : harness("h200"), budget(harness.device, lock, capacity, rules) {}
  void run(const std::function<asio::awaitable<void>(BudgetBench&)>& program) {
    sim::run_to_completion(harness.system, program(*this));
  }
  SimHarness harness;
  ComputeLock lock;
  VramBudget budget;
};

// Records when a reservation was granted.
struct Granted {
  std::optional<Reservation> reservation;
  Nanoseconds at_ns = -1;
};

void reserve_later(BudgetBench& bench, ComputeLock::Ticket ticket, Bytes bytes, Granted& granted) {
  asio::co_spawn(
      bench.harness.system.io(),
      [&bench, ticket, bytes, &granted]() -> asio::awaitable<void> {
        granted.reservation = co_await bench.budget.reserve(ticket, bytes);
        granted.at_ns = bench.harness.device.now();
      },
      asio::detached);
}

}  // namespace

BOOST_AUTO_TEST_CASE(reservations_release_in_part_and_in_whole) {
  BudgetBench bench(10 * kGiB);
  bench.run([](BudgetBench& b) -> asio::awaitable<void> {
    auto ticket = b.lock.take_ticket();
    b.budget.add_job(ticket, 10 * kGiB);
    {
      auto reservation = co_await b.budget.reserve(ticket, 8 * kGiB);
      BOOST_CHECK_EQUAL(b.budget.held_bytes(), 8 * kGiB);
      reservation.release(3 * kGiB);
      BOOST_CHECK_EQUAL(reservation.bytes(), 5 * kGiB);
      BOOST_CHECK_EQUAL(b.budget.held_bytes(), 5 * kGiB);
      auto part = reservation.split(2 * kGiB);
      BOOST_CHECK_EQUAL(b.budget.job_reserved_bytes(ticket), 5 * kGiB);
    }  // both die here
    BOOST_CHECK_EQUAL(b.budget.held_bytes(), 0u);
    b.budget.remove_job(ticket);
  });
}

BOOST_AUTO_TEST_CASE(memory_freed_in_stream_order_returns_only_when_the_stream_reaches_the_free) {
  BudgetBench bench(12 * kGiB);
  Granted waiter;
  Nanoseconds free_reached_ns = -1;
  bench.run([&](BudgetBench& b) -> asio::awaitable<void> {
    auto& device = b.harness.device;
    auto stream = device.create_stream();
    auto holder = b.lock.take_ticket();
    auto other = b.lock.take_ticket();
    b.budget.add_job(holder, 12 * kGiB);
    b.budget.add_job(other, 12 * kGiB);
    auto reservation = co_await b.budget.reserve(holder, 12 * kGiB);
    auto block = co_await device.allocate_async(12 * kGiB, stream);
    device.launch(contract::busy_wait(500 * kMillisecond), stream);
    device.free_async(block, stream);
    reservation.release_in_stream_order(12 * kGiB, stream);
    device.host_callback(stream, [&] { free_reached_ns = device.now(); });
    // The free is pending: the budget still counts it, and nobody else can have it.
    BOOST_CHECK_EQUAL(b.budget.held_bytes(), 12 * kGiB);
    BOOST_CHECK_EQUAL(b.budget.pending_bytes(), 12 * kGiB);
    b.lock.release(holder);
    b.budget.remove_job(holder);
    reserve_later(b, other, 8 * kGiB, waiter);
    co_await device.synchronize_stream(stream);
    co_await device.sleep_for(kMillisecond);  // let the granted waiter resume
    BOOST_CHECK_EQUAL(b.budget.pending_bytes(), 0u);
    BOOST_REQUIRE(waiter.reservation.has_value());
    waiter.reservation.reset();
    b.budget.remove_job(other);
    device.destroy_stream(stream);
  });
  BOOST_CHECK_GE(waiter.at_ns, 500 * kMillisecond);
  BOOST_CHECK_EQUAL(waiter.at_ns, free_reached_ns);
}

BOOST_AUTO_TEST_CASE(releasing_at_the_call_is_the_rule_turned_off) {
  VramBudgetRules rules;
  rules.release_after_free_event = false;
  BudgetBench bench(12 * kGiB, rules);
  bench.run([](BudgetBench& b) -> asio::awaitable<void> {
    auto& device = b.harness.device;
    auto stream = device.create_stream();
    auto ticket = b.lock.take_ticket();
    b.budget.add_job(ticket, 12 * kGiB);
    auto reservation = co_await b.budget.reserve(ticket, 12 * kGiB);
    device.launch(contract::busy_wait(500 * kMillisecond), stream);
    reservation.release_in_stream_order(12 * kGiB, stream);
    BOOST_CHECK_EQUAL(b.budget.held_bytes(), 0u);  // too early: the stream has not got there
    co_await device.synchronize_stream(stream);
    b.budget.remove_job(ticket);
    device.destroy_stream(stream);
  });
}

BOOST_AUTO_TEST_CASE(admission_keeps_room_for_the_lock_holder_to_reach_its_peak) {
  BudgetBench bench(16 * kGiB);
  Granted prestage;
  Granted holder_rest;
  bench.run([&](BudgetBench& b) -> asio::awaitable<void> {
    auto holder = b.lock.take_ticket();
    auto waiting = b.lock.take_ticket();
    BOOST_REQUIRE(b.lock.is_holder(holder));
    b.budget.add_job(holder, 12 * kGiB);
    b.budget.add_job(waiting, 12 * kGiB);
    auto first = co_await b.budget.reserve(holder, 4 * kGiB);
    // 4 held + 6 asked + the holder's 8 still to come = 18 > 16: not admitted.
    BOOST_CHECK(!b.budget.try_reserve(waiting, 6 * kGiB).has_value());
    reserve_later(b, waiting, 6 * kGiB, prestage);
    co_await b.harness.device.sleep_for(kMillisecond);
    BOOST_CHECK(!prestage.reservation.has_value());
    // The holder gets its peak at once; 4 GiB would be admitted beside it.
    holder_rest.reservation = co_await b.budget.reserve(holder, 8 * kGiB);
    // The holder finishes: the waiter becomes holder and gets its memory.
    first.release(first.bytes());
    holder_rest.reservation.reset();
    b.lock.release(holder);
    b.budget.remove_job(holder);
    co_await b.harness.device.sleep_for(kMillisecond);
    BOOST_CHECK(prestage.reservation.has_value());
    prestage.reservation.reset();
    b.lock.release(waiting);
    b.budget.remove_job(waiting);
  });
}

BOOST_AUTO_TEST_CASE(without_the_admission_rule_a_waiting_job_takes_the_holders_room) {
  VramBudgetRules rules;
  rules.admission_protects_lock_holder = false;
  BudgetBench bench(16 * kGiB, rules);
  bench.run([](BudgetBench& b) -> asio::awaitable<void> {
    auto holder = b.lock.take_ticket();
    auto waiting = b.lock.take_ticket();
    b.budget.add_job(holder, 12 * kGiB);
    b.budget.add_job(waiting, 12 * kGiB);
    auto first = co_await b.budget.reserve(holder, 4 * kGiB);
    auto taken = b.budget.try_reserve(waiting, 10 * kGiB);
    BOOST_CHECK(taken.has_value());
    BOOST_CHECK(!b.budget.try_reserve(holder, 8 * kGiB).has_value());  // the holder can no longer reach its peak
    taken.reset();
    first.release(first.bytes());
    b.lock.release(holder);
    b.lock.release(waiting);
    b.budget.remove_job(holder);
    b.budget.remove_job(waiting);
  });
}

BOOST_AUTO_TEST_CASE(waiters_are_served_in_lock_order) {
  BudgetBench bench(10 * kGiB);
  Granted second;
  Granted third;
  bench.run([&](BudgetBench& b) -> asio::awaitable<void> {
    auto holder = b.lock.take_ticket();
    auto next = b.lock.take_ticket();
    auto last = b.lock.take_ticket();
    b.budget.add_job(holder, 10 * kGiB);
    b.budget.add_job(next, 8 * kGiB);
    b.budget.add_job(last, 3 * kGiB);
    auto all = co_await b.budget.reserve(holder, 10 * kGiB);
    // The later, smaller request asks first; it must not get ahead of the job before it.
    reserve_later(b, last, 3 * kGiB, third);
    co_await b.harness.device.sleep_for(kMillisecond);
    reserve_later(b, next, 8 * kGiB, second);
    co_await b.harness.device.sleep_for(kMillisecond);
    all.release(all.bytes());
    b.lock.release(holder);
    b.budget.remove_job(holder);
    co_await b.harness.device.sleep_for(kMillisecond);
    BOOST_CHECK(second.reservation.has_value());
    BOOST_CHECK(!third.reservation.has_value());  // 8 + 3 > 10
    second.reservation.reset();
    b.lock.release(next);
    b.budget.remove_job(next);
    co_await b.harness.device.sleep_for(kMillisecond);
    BOOST_CHECK(third.reservation.has_value());
    third.reservation.reset();
    b.lock.release(last);
    b.budget.remove_job(last);
  });
  BOOST_CHECK_LT(second.at_ns, third.at_ns);
}

BOOST_AUTO_TEST_CASE(another_process_taking_memory_shrinks_the_capacity) {
  BudgetBench bench(16 * kGiB);
  std::vector<std::string> log;
  bench.budget.set_log([&](const std::string& line) { log.push_back(line); });
  Granted late;
  bench.run([&](BudgetBench& b) -> asio::awaitable<void> {
    auto ticket = b.lock.take_ticket();
    b.budget.add_job(ticket, 12 * kGiB);
    auto first = co_await b.budget.reserve(ticket, 4 * kGiB);
    b.harness.device.set_external_memory(b.harness.device.properties().total_memory_bytes - 10 * kGiB);
    // Capacity is now 16 - (total - 10) GiB, far below 12: the next reservation must wait.
    reserve_later(b, ticket, 8 * kGiB, late);
    co_await b.harness.device.sleep_for(kMillisecond);
    BOOST_CHECK_LT(b.budget.capacity_bytes(), 12 * kGiB);
    BOOST_CHECK(!late.reservation.has_value());
    // The other process leaves; the next look at memory info restores the capacity.
    b.harness.device.set_external_memory(0);
    b.budget.reconcile();
    co_await b.harness.device.sleep_for(kMillisecond);
    BOOST_CHECK(late.reservation.has_value());
    BOOST_CHECK_EQUAL(b.budget.capacity_bytes(), 16 * kGiB);
    late.reservation.reset();
    first.release(first.bytes());
    b.lock.release(ticket);
    b.budget.remove_job(ticket);
  });
  BOOST_REQUIRE_GE(log.size(), 2u);
  BOOST_TEST(log[0].find("used outside this budget") != std::string::npos, log[0]);
}

BOOST_AUTO_TEST_CASE(a_peak_beyond_the_capacity_is_refused_with_a_clear_error) {
  BudgetBench bench(8 * kGiB);
  auto ticket = bench.lock.take_ticket();
  BOOST_CHECK_EXCEPTION(bench.budget.add_job(ticket, 9 * kGiB), std::runtime_error,
                        [](const std::runtime_error& error) {
                          return std::string(error.what()).find("needs 9.00 GiB") != std::string::npos;
                        });
}

// ---- Invariants stay checked in Release builds (STAGEHAND_ASSERT) ----

namespace {

// Makes assertions throw for the test's duration, so that the test sees them fire.
struct ThrowingAssertions {
  ThrowingAssertions() : previous(set_assertion_handler(&throwing_assertion_handler)) {}
  ~ThrowingAssertions() { set_assertion_handler(previous); }
  AssertionHandler previous;
};

}  // namespace

BOOST_AUTO_TEST_CASE(a_reservation_released_twice_fires_an_assertion_naming_the_place) {
  ThrowingAssertions throwing;
  BudgetBench bench(10 * kGiB);
  std::string message;
  bench.run([&message](BudgetBench& b) -> asio::awaitable<void> {
    auto ticket = b.lock.take_ticket();
    b.budget.add_job(ticket, 10 * kGiB);
    auto reservation = co_await b.budget.reserve(ticket, 4 * kGiB);
    reservation.release(4 * kGiB);
    try {
      reservation.release(4 * kGiB);
    } catch (const AssertionFailure& failure) {
      message = failure.what();
    }
    b.budget.remove_job(ticket);
  });
  BOOST_TEST_MESSAGE(message);
  BOOST_TEST(message.find("assertion failed at src/coordinator/vram_budget.cpp:") == 0, message);
  BOOST_TEST(message.find("bytes <= bytes_") != std::string::npos, message);
  BOOST_TEST(message.find("releasing 4294967296 bytes of a reservation that holds 0") != std::string::npos, message);
  // Nothing was given back twice.
  BOOST_CHECK_EQUAL(bench.budget.held_bytes(), 0u);
}

BOOST_AUTO_TEST_CASE(by_default_a_failed_assertion_prints_where_and_aborts) {
  int error_pipe[2];
  BOOST_REQUIRE_EQUAL(pipe(error_pipe), 0);
  const pid_t child = fork();
  BOOST_REQUIRE_GE(child, 0);
  if (child == 0) {
    // The test framework's own SIGABRT handler must not take over the child.
    std::signal(SIGABRT, SIG_DFL);
    dup2(error_pipe[1], STDERR_FILENO);
    ComputeLock lock;
    lock.release(7);  // never taken
    _exit(0);         // not reached: the default handler aborts
  }
  close(error_pipe[1]);
  std::string printed;
  char buffer[512];
  for (ssize_t got; (got = read(error_pipe[0], buffer, sizeof buffer)) > 0;)
    printed.append(buffer, static_cast<std::size_t>(got));
  close(error_pipe[0]);
  int status = 0;
  waitpid(child, &status, 0);
  BOOST_TEST(WIFSIGNALED(status));
  BOOST_CHECK_EQUAL(WTERMSIG(status), SIGABRT);
  BOOST_TEST(printed.find("stagehand: assertion failed at src/coordinator/compute_lock.cpp:") == 0, printed);
  BOOST_TEST(printed.find("ticket 7 releases a lock held by 0") != std::string::npos, printed);
}
