// etscope-synth-etdump: writes a synthetic ETDump shaped like ExecuTorch's (size-prefixed ED00,
// a "Default" block with Program::load_method and Method::init, then one "Execute" block per
// run holding native_call_<op> inside OPERATOR_CALL for every instruction and Method::execute),
// with deterministic pseudo-random durations, for benchmarks of readers, the Inspector and the
// viewer at sizes no real model gives us.
//
//   etscope-synth-etdump OUT.etdp [--events N] [--ops-per-run M] [--delegate-every K] [--engine NAME[:VERSION]]
//
// N is the total number of profile events (default 1,000,000); M the instructions per run
// (default 500, so 2M+1 events per run). With K > 0 every K-th instruction is a DELEGATE_CALL
// followed by three delegate events with string ids, as XNNPACK logs them. --engine ends the
// Default block with etscope's engine marker for that engine (core/event_names.h), as etscope's
// runner writes it; without it the dump names no engine, as ExecuTorch's own runners' do.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "etscope/formats/blob.h"
#include "etscope/core/event_names.h"
#include "etscope_fb/etdump_generated.h"

namespace fb = etscope::fb::etdump;

namespace {

struct Rng {
  uint64_t s = 0x9E3779B97F4A7C15ull;
  uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
};

const char* const kOps[] = {"convolution.out", "relu.out", "max_pool2d_with_indices.out", "addmm.out", "add.out",
                            "_native_batch_norm_legit_no_training.out", "hardtanh.out", "mean.out", "view_copy.out", "permute_copy.out"};

constexpr const char* kUsage =
    "usage: etscope-synth-etdump OUT.etdp [--events N] [--ops-per-run M] [--delegate-every K] [--seed S] [--slow INSTR:FACTOR] "
    "[--engine NAME[:VERSION]]\n";

int usage() {
  std::fputs(kUsage, stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  if (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::fputs(kUsage, stdout);
    std::puts("Writes a synthetic ETDump (for the reader and Inspector benchmarks): run blocks of --ops-per-run\n"
              "kernel events until --events are written; --delegate-every K makes every K-th instruction a\n"
              "delegate call with three delegate events. --seed S draws other durations (other bytes: another\n"
              "run for the store); --slow INSTR:FACTOR makes one instruction's kernel FACTOR times slower;\n"
              "--engine NAME[:VERSION] records etscope's engine marker for that engine in the Default block.");
    return 0;
  }
  // An option where the output path belongs is a mistake, not a file name.
  if (argv[1][0] == '-') return usage();
  std::string out_path = argv[1];
  uint64_t events = 1000000, ops = 500, delegate_every = 0, seed = 0;
  int64_t slow_instr = -1;
  double slow_factor = 1;
  std::string engine_marker;
  for (int i = 2; i < argc; ++i) {
    auto value = [&](uint64_t* v) {
      if (i + 1 >= argc) return false;
      char* end = nullptr;
      *v = std::strtoull(argv[++i], &end, 10);
      return end != nullptr && *end == '\0';
    };
    bool ok = false;
    if (std::strcmp(argv[i], "--events") == 0) ok = value(&events);
    else if (std::strcmp(argv[i], "--ops-per-run") == 0) ok = value(&ops);
    else if (std::strcmp(argv[i], "--delegate-every") == 0) ok = value(&delegate_every);
    else if (std::strcmp(argv[i], "--seed") == 0) ok = value(&seed);
    else if (std::strcmp(argv[i], "--slow") == 0 && i + 1 < argc) {
      char* end = nullptr;
      slow_instr = std::strtoll(argv[++i], &end, 10);
      ok = end != nullptr && *end == ':';
      if (ok) {
        slow_factor = std::strtod(end + 1, &end);
        ok = *end == '\0' && slow_factor > 0 && slow_factor < 1e6 && slow_instr >= 0;
      }
    }
    else if (std::strcmp(argv[i], "--engine") == 0 && i + 1 < argc) {
      const std::string spec = argv[++i];
      const size_t colon = spec.find(':');
      const std::string name = spec.substr(0, colon);
      ok = !name.empty() && name.find(' ') == std::string::npos;
      engine_marker = etscope::events::engine_marker_name(name, colon == std::string::npos ? "" : spec.substr(colon + 1));
    }
    if (!ok) return usage();
  }
  if (ops == 0) return usage();
  flatbuffers::FlatBufferBuilder b(events * 72 + (1 << 20));
  Rng rng;
  rng.s ^= seed * 0xD1B54A32D192ED03ull;
  if (rng.s == 0) rng.s = 1;
  uint64_t now = 1'000'000'000;
  std::vector<flatbuffers::Offset<fb::RunData>> runs;
  auto profile = [&](const char* name, int32_t chain, int32_t instr, uint64_t start, uint64_t end, const char* delegate_str = nullptr) {
    auto n = name ? b.CreateString(name) : flatbuffers::Offset<flatbuffers::String>();
    auto d = delegate_str ? b.CreateString(delegate_str) : flatbuffers::Offset<flatbuffers::String>();
    fb::ProfileEventBuilder p(b);
    if (name) p.add_name(n);
    if (delegate_str) p.add_delegate_debug_id_str(d);
    p.add_chain_index(chain);
    p.add_instruction_id(instr);
    p.add_start_time(start);
    p.add_end_time(end);
    auto pe = p.Finish();
    fb::EventBuilder e(b);
    e.add_profile_event(pe);
    return e.Finish();
  };
  {
    std::vector<flatbuffers::Offset<fb::Event>> ev;
    ev.push_back(profile(etscope::events::kMethodInit.data(), -1, 0, now + 100, now + 5000));
    ev.push_back(profile(etscope::events::kProgramLoadMethod.data(), -1, 0, now, now + 6000));
    if (!engine_marker.empty()) ev.push_back(profile(engine_marker.c_str(), -1, -1, now + 6000, now + 6000));
    auto name = b.CreateString(etscope::events::kBlockDefault.data());
    auto vec = b.CreateVector(ev);
    runs.push_back(fb::CreateRunData(b, name, -1, 0, vec));
    now += 10000;
  }
  uint64_t written = 2;
  std::vector<flatbuffers::Offset<fb::Event>> ev;
  char delegate_name[64];
  while (written < events) {
    ev.clear();
    const uint64_t run_start = now;
    for (uint64_t i = 0; i < ops && written < events; ++i) {
      const int32_t instr = static_cast<int32_t>(i);
      // Each instruction has its own duration (2-52 us), the same in every run, plus up to 5%
      // jitter per run: runs of one seed and of another look like reruns of one program.
      uint64_t mix = (i + 1) * 0x9E3779B97F4A7C15ull;
      mix = (mix ^ (mix >> 31)) * 0xBF58476D1CE4E5B9ull;
      const uint64_t base = 2000 + (mix ^ (mix >> 29)) % 50000;
      uint64_t kernel = base + rng.next() % (base / 20 + 1);
      if (static_cast<int64_t>(i) == slow_instr) kernel = static_cast<uint64_t>(static_cast<double>(kernel) * slow_factor);
      const uint64_t op_start = now + 300;
      if (delegate_every > 0 && i % delegate_every == 0) {
        uint64_t t = op_start + 200;
        for (int k = 0; k < 3; ++k) {
          std::snprintf(delegate_name, sizeof delegate_name, "Convolution (NHWC, F32) IGEMM #%d", k + 1);
          const uint64_t d = kernel / 4;
          ev.push_back(profile(nullptr, 0, instr, t, t + d, delegate_name));
          t += d + 50;
        }
        ev.push_back(profile(etscope::events::kDelegateCall.data(), 0, instr, op_start, t + 200));
        written += 4;
        now = t + 500;
        continue;
      }
      ev.push_back(profile((std::string(etscope::events::kNativeCallPrefix) + kOps[i % (sizeof kOps / sizeof kOps[0])]).c_str(), 0, instr, op_start + 100,
                           op_start + 100 + kernel));
      ev.push_back(profile(etscope::events::kOperatorCall.data(), 0, instr, op_start, op_start + kernel + 250));
      written += 2;
      now = op_start + kernel + 400;
    }
    ev.push_back(profile(etscope::events::kMethodExecute.data(), -1, 0, run_start, now + 100));
    ++written;
    now += 1000;
    auto name = b.CreateString(etscope::events::kBlockExecute.data());
    auto vec = b.CreateVector(ev);
    runs.push_back(fb::CreateRunData(b, name, -1, 0, vec));
  }
  auto vec = b.CreateVector(runs);
  auto root = fb::CreateETDump(b, 0, vec);
  b.FinishSizePrefixed(root, "ED00");
  etscope::Status written_ok = etscope::write_file_bytes(out_path, {b.GetBufferPointer(), static_cast<size_t>(b.GetSize())});
  if (!written_ok.ok()) {
    std::fprintf(stderr, "etscope-synth-etdump: %s\n", written_ok.error().message().c_str());
    return 1;
  }
  std::printf("%s: %llu profile events in %zu run blocks, %zu bytes\n", out_path.c_str(), static_cast<unsigned long long>(written), runs.size(),
              static_cast<size_t>(b.GetSize()));
  return 0;
}
