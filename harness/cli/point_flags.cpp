#include "cli/point_flags.hpp"

#include "cli/help_format.hpp"
#include "cli/option_help.hpp"
#include "cli/port_flag.hpp"

namespace iocpbench::cli {
namespace {

// Which commands take a flag.
enum Takes : unsigned { kRun = 1, kSweep = 2, kTune = 4, kAll = kRun | kSweep | kTune };

struct PointFlagRow {
  const char* names;                   // "-c,--concurrency"
  std::string PointFlagTexts::*text;   // where the given text goes
  const char* type;                    // what one value is (sweep's list: TYPE,...)
  const char* help;                    // what one value means, the same in every command
  unsigned takes;                      // Takes
  bool list_in_sweep;                  // sweep: a comma-separated list, one point per value
  bool common;                         // --help's Common heading (else Advanced)
  bool required_in_tune;               // tune has no default: the user names it
  // The default --help shows (run also starts from it), from the command's grid
  // (sweep::default_grid, tune::tune_grid): a list for sweep, one value for run and tune.
  std::string (*default_text)(const sweep::Grid& grid, PointCommand use);
};

template <typename T, typename Text>
std::string list_text(const std::vector<T>& items, Text text) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ",") + text(item);
  return out;
}
std::string spec_text(const core::CountSpec& spec) { return spec.text; }
std::string pool_text(const core::PoolSpec& spec) { return spec.text; }
template <typename Kind>
std::string kind_text(Kind kind) { return std::string(to_string(kind)); }

using G = sweep::Grid;
using T = PointFlagTexts;

// The rows, in the order --help lists them under each heading.
const PointFlagRow kPointFlags[] = {
    {"-w,--workload", &T::workload, "TEXT", "post, file or socket", kAll, true, true, true,
     [](const G& g, PointCommand use) { return use != PointCommand::sweep ? "post" : list_text(g.workloads, kind_text<WorkloadKind>); }},
    {"--port", &T::port, "TEXT", kPortHelp, kAll, true, true, false,
     [](const G& g, PointCommand use) {
       return use != PointCommand::sweep ? kind_text(g.ports.front()) : list_text(g.ports, kind_text<port::Backend>);
     }},
    {"-c,--concurrency", &T::concurrency, "COUNT",
     "the port's concurrency value: an integer, 0 (the port's default: logical CPUs), or "
     "N-relative (N, 2N, 2N+2)",
     kRun | kSweep, true, true, false,
     [](const G& g, PointCommand use) { return use != PointCommand::sweep ? std::string("N") : list_text(g.concurrency, spec_text); }},
    {"-p,--pool", &T::pool, "POOL",
     "worker threads: an integer or N-relative (N, 2N, 2N+2), or 'auto' / "
     "auto:MIN:MAX[:GROW_PCT:SHRINK_PCT[:IDLE_MS]]: Richter's self-sizing pool (default "
     "auto:N:4N:75:90:100); or a controller: hill[:MIN:MAX] (.NET's hill climber), "
     "formula[:MIN:MAX[:PERIOD_MS]] (N/(1-b measured)), stall:LIMIT_MS[:MAX] (MariaDB's stall "
     "rule)",
     kRun | kSweep, true, true, false,
     [](const G& g, PointCommand use) { return use != PointCommand::sweep ? std::string("2N") : list_text(g.pool, pool_text); }},
    {"-b,--blocking", &T::blocking, "FLOAT",
     "blocking ratio b in [0, 1): the share of each handler's time spent blocked; it computes "
     "for --work-us and blocks for b/(1-b) times its measured CPU time (about work_us*b/(1-b)); "
     "b > 0 needs --work-us > 0",
     kAll, true, true, true,
     [](const G& g, PointCommand use) { return use != PointCommand::sweep ? std::string("0") : list_text(g.blocking, number_text); }},
    {"-d,--duration", &T::duration, "SECONDS", "measured time per run: seconds, or a duration (500ms, 2m)",
     kAll, false, true, false, [](const G& g, PointCommand) { return number_text(g.duration_s); }},
    {"-r,--repetitions", &T::repetitions, "INT", "runs of each point", kAll, false, true, false,
     [](const G& g, PointCommand use) {
       return use == PointCommand::run ? std::string("1") : std::to_string(g.repetitions);
     }},
    {"--dispatch", &T::dispatch, "TEXT",
     "shared (one port for the pool) or per-thread (each worker its own port with concurrency "
     "1, DiskSpd's model; --concurrency does not apply)",
     kAll, true, false, false,
     [](const G& g, PointCommand use) {
       return use != PointCommand::sweep ? kind_text(g.dispatch.front()) : list_text(g.dispatch, kind_text<Dispatch>);
     }},
    {"--blocking-kind", &T::blocking_kind, "TEXT",
     "how a handler blocks: sleep (a timer) or io (synchronous O_DIRECT reads)", kAll, false,
     false, false, [](const G& g, PointCommand) { return kind_text(g.blocking_kind); }},
    {"--work-us", &T::work_us, "US",
     "calibrated CPU work per completion: microseconds, or a duration (0.1ms)", kAll, false,
     false, false, [](const G& g, PointCommand) { return number_text(g.work_us); }},
    {"--warmup", &T::warmup, "SECONDS", "warm-up before each run's window: seconds, or a duration (150ms)",
     kAll, false, false, false, [](const G& g, PointCommand) { return number_text(g.warmup_s); }},
    {"--working-set-kib", &T::working_set_kib, "KIB",
     "KiB (or a size: 64k, 2MiB) of each worker thread's own buffer, one write per 64-byte line "
     "on every packet (so a port's wake-up order shows in the caches; 0: none)",
     kAll, false, false, false, [](const G& g, PointCommand) { return std::to_string(g.working_set_kib); }},
    {"--dequeue-batch", &T::dequeue_batch, "COUNT",
     "packets each worker takes per remove, 1 to 1024 or N-relative (N, 2N): above 1 one "
     "GetQueuedCompletionStatusEx takes up to that many on one concurrency slot (C then limits "
     "threads, not packets) and the thread handles them in order, so each waits behind the ones "
     "before it (counted in its queue delay and latency); 1: one packet per remove",
     kRun | kSweep, true, false, false,
     [](const G& g, PointCommand use) {
       return use != PointCommand::sweep ? g.dequeue_batch.front().text : list_text(g.dequeue_batch, spec_text);
     }},
    {"--skip-on-success", &T::skip_on_success, "TEXT",
     "file, socket, Windows: on | off: whether the I/O handles ask for "
     "FILE_SKIP_COMPLETION_PORT_ON_SUCCESS, so an I/O that succeeds at once queues no packet and "
     "its issuing worker handles it (default: socket on where granted, file off; Linux: every "
     "completion is a packet, on is refused)",
     kAll, false, false, false, [](const G& g, PointCommand) { return kind_text(g.skip_on_success); }},
    {"--affinity", &T::affinity, "PLACEMENT",
     "pin each worker thread to one CPU: none (the OS places them; no affinity call), compact "
     "(worker i on the i-th CPU filling a core's SMT siblings, then the socket, then the next "
     "socket), spread (one thread of every core, sockets alternating, before any second "
     "sibling), or a CPU list such as 0,2-3 (round-robin over it); the CPUs read back are "
     "recorded in points[].affinity",
     kAll, false, false, false, [](const G& g, PointCommand) { return g.affinity.text; }},
    {"--load-affinity", &T::load_affinity, "PLACEMENT",
     "pin the load generator's threads (posters, the socket workload's client thread, the open "
     "loop's pacer) the same way: none, compact, spread or a CPU list",
     kAll, false, false, false, [](const G& g, PointCommand) { return g.load_affinity.text; }},
    {"--rate", &T::rate, "FLOAT",
     "open loop: offered completions per second, each request started at its intended time and "
     "its latency measured from it (default: the closed loop)",
     kRun | kSweep, true, false, false, [](const G&, PointCommand) { return std::string(); }},
    {"--load", &T::load, "FLOAT",
     "open loop: offered load, a fraction in (0, 1] of the point's capacity, measured first in "
     "a closed-loop run of up to 1 s and recorded beside the run; latency is from each "
     "request's intended time (default: the closed loop)",
     kRun | kSweep, true, false, false, [](const G&, PointCommand) { return std::string(); }},
    {"--arrivals", &T::arrivals, "TEXT",
     "open-loop arrival process: poisson (exponential gaps, seeded by --seed) or constant",
     kRun | kSweep, false, false, false, [](const G& g, PointCommand) { return std::string(core::to_string(g.arrivals)); }},
    {"--max-in-flight", &T::max_in_flight, "INT",
     "open loop: requests in flight at most (0: the workload's own: post --in-flight, file "
     "--outstanding, socket --connections x --messages-in-flight); arrivals beyond it wait, keep "
     "their intended time and mark the run over capacity",
     kRun | kSweep, false, false, false, [](const G& g, PointCommand) { return std::to_string(g.max_in_flight); }},
    {"--pacer-priority", &T::pacer_priority, "TEXT",
     "open loop: realtime (the pacer and the stall meter at a real-time priority, SCHED_FIFO on "
     "Linux, HIGHEST and TIME_CRITICAL on Windows, so that the workers cannot delay them; where the OS "
     "refuses, the run records why and goes on at normal) or normal",
     kRun | kSweep, false, false, false,
     [](const G& g, PointCommand) { return std::string(g.realtime_pacer ? "realtime" : "normal"); }},
    {"--seed", &T::seed, "INT",
     "seed of the open loop's Poisson arrivals (repetition k uses seed+k) and of a sweep's or "
     "tune's run order",
     kAll, false, false, false, [](const G& g, PointCommand) { return std::to_string(g.seed); }},
};

unsigned bit(PointCommand use) {
  switch (use) {
    case PointCommand::run: return kRun;
    case PointCommand::sweep: return kSweep;
    case PointCommand::tune: return kTune;
  }
  return 0;
}

}  // namespace

std::vector<CLI::Option*> add_point_flags(CLI::App& command, PointFlagTexts& texts,
                                          PointCommand use, const sweep::Grid& defaults) {
  std::vector<CLI::Option*> added;
  for (const PointFlagRow& row : kPointFlags) {
    if ((row.takes & bit(use)) == 0) continue;
    const bool list = use == PointCommand::sweep && row.list_in_sweep;
    const bool required = use == PointCommand::tune && row.required_in_tune;
    std::string& text = texts.*row.text;
    const std::string default_text = required ? "" : row.default_text(defaults, use);
    // run parses every flag's text, the default's included; sweep and tune tell a given flag
    // by its text.
    if (use == PointCommand::run) text = default_text;
    CLI::Option* option = add_text_option(command, row.names, text,
                                          required ? std::string(row.help) + " (required)" : row.help,
                                          list ? std::string(row.type) + ",..." : row.type, default_text);
    option->group(row.common ? kGroupCommon : kGroupAdvanced);
    added.push_back(option);
  }
  return added;
}

}  // namespace iocpbench::cli
