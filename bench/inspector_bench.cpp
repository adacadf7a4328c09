// inspector_bench: the ETDump/Inspector figures of issue 6, printed as one JSON object each.
//
//   inspector_bench load TRACE.etdp [--repeat N]
//       ETDump read + Inspector build + per-type summary of every block (best of N), and the
//       heap bytes the loaded dump and the Inspector hold per raw event.
//   inspector_bench tracer MODEL.pte [--iterations N]
//       Tracer cost: ns per start/end pair recorded into EtDumpWriter in a tight loop, and the
//       model run untraced vs traced (profiling only), interleaved, median per execution.
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "etscope/etdump/etdump_reader.h"
#include "etscope/etdump/etdump_writer.h"
#include "etscope/core/event_names.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/inspect/inspector.h"
#include "etscope/runtime/method.h"

using namespace etscope;
using Clock = std::chrono::steady_clock;

namespace {

int fail(const std::string& m) {
  std::fprintf(stderr, "inspector_bench: %s\n", m.c_str());
  return 1;
}

size_t heap_in_use() {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

int load_bench(const std::string& path, int repeat) {
  double best_read = 1e300, best_build = 1e300, best_total = 1e300;
  size_t events = 0, heap_dump = 0, heap_inspector = 0, blocks = 0;
  for (int r = 0; r < repeat; ++r) {
    const size_t h0 = heap_in_use();
    const auto t0 = Clock::now();
    auto dump = etdump::EtDumpReader::open(path);
    if (!dump.ok()) return fail(dump.error().message());
    auto shared = std::make_shared<const etdump::EtDumpFile>(std::move(dump).value());
    const double t_read = ms_since(t0);
    const size_t h1 = heap_in_use();
    const auto t1 = Clock::now();
    auto in = inspect::Inspector::build(shared, nullptr, nullptr, {});
    if (!in.ok()) return fail(in.error().message());
    double sink = 0;
    for (size_t b = 0; b < in->blocks().size(); ++b) {
      for (const auto& t : in->summary_by_type(b)) sink += t.total;
    }
    const double t_build = ms_since(t1);
    const size_t h2 = heap_in_use();
    best_read = std::min(best_read, t_read);
    best_build = std::min(best_build, t_build);
    best_total = std::min(best_total, t_read + t_build);
    events = shared->events.size();
    blocks = in->blocks().size();
    heap_dump = h1 - h0;
    heap_inspector = h2 - h1;
    if (sink < 0) std::puts("");
  }
  std::printf("{\"file\": \"%s\", \"events\": %zu, \"event_blocks\": %zu, \"read_ms\": %.2f, \"inspector_ms\": %.2f, \"total_ms\": %.2f, "
              "\"heap_bytes_per_event\": {\"etdump\": %.1f, \"inspector\": %.1f, \"total\": %.1f}}\n",
              path.c_str(), events, blocks, best_read, best_build, best_total, static_cast<double>(heap_dump) / static_cast<double>(events),
              static_cast<double>(heap_inspector) / static_cast<double>(events),
              static_cast<double>(heap_dump + heap_inspector) / static_cast<double>(events));
  return 0;
}

int tracer_bench(const std::string& model, int iterations) {
  // 1. Raw cost of one profiled event: a start/end pair, as the runtime calls them.
  const size_t n = 1 << 20;
  double ns_per_event = 0;
  {
    etdump::EtDumpWriterOptions o;
    o.max_events = n + 16;
    etdump::EtDumpWriter w(o);
    w.create_event_block(etscope::events::kBlockExecute.data());
    const auto t0 = Clock::now();
    for (size_t i = 0; i < n; ++i) w.end_profiling(w.start_profiling(etscope::events::kOperatorCall.data(), 0, static_cast<uint32_t>(i & 1023)));
    ns_per_event = ms_since(t0) * 1e6 / static_cast<double>(n);
  }
  // 2. The model untraced and traced, interleaved.
  auto program = PteReader::open(model);
  if (!program.ok()) return fail(program.error().message());
  runtime::MethodOptions plain;
  auto untraced = runtime::Method::load(*program, "forward", plain);
  if (!untraced.ok()) return fail(untraced.error().message());
  etdump::EtDumpWriterOptions wo;
  wo.max_events = 1 << 22;
  etdump::EtDumpWriter writer(wo);
  runtime::MethodOptions with;
  with.tracer = &writer;
  auto traced = runtime::Method::load(*program, "forward", with);
  if (!traced.ok()) return fail(traced.error().message());
  std::mt19937 rng(0);
  std::vector<std::vector<uint8_t>> inputs;
  for (size_t i = 0; i < (*untraced)->num_inputs(); ++i) {
    const TensorImpl& t = *(*untraced)->input(i).tensor;
    std::vector<uint8_t> bytes(t.nbytes(), 0);
    if (t.dtype() == ScalarType::kFloat) {
      auto* f = reinterpret_cast<float*>(bytes.data());
      for (int64_t k = 0; k < t.numel(); ++k) f[k] = std::uniform_real_distribution<float>(-1, 1)(rng);
    }
    inputs.push_back(std::move(bytes));
  }
  auto run = [&](runtime::Method& m) {
    for (size_t i = 0; i < m.num_inputs(); ++i) (void)m.set_input(i, inputs[i]);
    const auto t0 = Clock::now();
    Status s = m.execute();
    const double ms = ms_since(t0);
    return s.ok() ? ms : -1.0;
  };
  std::vector<double> a, b;
  for (int i = 0; i < 3; ++i) {
    run(**untraced);
    writer.create_event_block(etscope::events::kBlockExecute.data());
    run(**traced);
  }
  const size_t events_before = writer.event_count();
  for (int i = 0; i < iterations; ++i) {
    a.push_back(run(**untraced));
    writer.create_event_block(etscope::events::kBlockExecute.data());
    b.push_back(run(**traced));
  }
  const double per_exec = static_cast<double>(writer.event_count() - events_before) / iterations;
  if (std::find(a.begin(), a.end(), -1.0) != a.end() || std::find(b.begin(), b.end(), -1.0) != b.end()) return fail("execution failed");
  const double ma = median(a), mb = median(b);
  std::printf("{\"model\": \"%s\", \"ns_per_event_loop\": %.1f, \"events_per_execution\": %.0f, \"untraced_ms\": %.4f, \"traced_ms\": %.4f, "
              "\"traced_over_untraced\": %.4f, \"iterations\": %d}\n",
              model.c_str(), ns_per_event, per_exec, ma, mb, mb / ma, iterations);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return fail("usage: inspector_bench load TRACE.etdp [--repeat N] | tracer MODEL.pte [--iterations N]");
  const std::string mode = argv[1], path = argv[2];
  int count = mode == "load" ? 3 : 200;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--repeat") == 0 || std::strcmp(argv[i], "--iterations") == 0) count = std::max(1, std::atoi(argv[i + 1]));
  }
  if (mode == "load") return load_bench(path, count);
  if (mode == "tracer") return tracer_bench(path, count);
  return fail("unknown mode " + mode);
}
