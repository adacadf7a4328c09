#include "model/timeline_model.h"

#include <algorithm>
#include <unordered_map>

#include "etscope/inspect/inspector.h"
#include "etscope/inspect/profile.h"
#include "model/event_lookup.h"
#include "model/text_format.h"

namespace etscope::gui {
namespace {

uint32_t fnv1a(const std::string& s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

std::string event_display_name(const etdump::EtDumpFile& dump, const etdump::Event& e) {
  if (!e.delegate) return dump.name_of(e);
  const etdump::DelegateRef& ref = dump.delegate_refs[e.ref];
  if (ref.name < dump.names.size() && !dump.names[ref.name].empty()) return dump.names[ref.name];
  if (!ref.id_str.empty()) return ref.id_str;
  return "delegate event " + std::to_string(ref.id_int);
}

}  // namespace

TimelineModel TimelineModel::build(std::shared_ptr<const etdump::EtDumpFile> dump) {
  TimelineModel m;
  m.dump_ = std::move(dump);
  const etdump::EtDumpFile& f = *m.dump_;

  // One style per distinct event name: names are interned by the reader, delegate events are
  // keyed by their delegate ref. Styles are made on first use.
  std::vector<uint32_t> name_style(f.names.size(), UINT32_MAX);
  std::vector<uint32_t> ref_style(f.delegate_refs.size(), UINT32_MAX);
  std::unordered_map<std::string, uint32_t> by_display_name;
  auto style_of = [&](const etdump::Event& e) -> uint32_t {
    uint32_t& slot = e.delegate ? ref_style[e.ref] : name_style[e.ref];
    if (slot != UINT32_MAX) return slot;
    std::string name = event_display_name(f, e);
    auto key = (e.delegate ? "d:" : "n:") + name;
    auto it = by_display_name.find(key);
    if (it != by_display_name.end()) return slot = it->second;
    BarStyle style;
    style.kind = events::classify(name, e.delegate);
    style.label = events::native_call_op(name);
    style.name = std::move(name);
    style.hash = fnv1a(style.label);
    slot = static_cast<uint32_t>(m.styles_.size());
    by_display_name.emplace(std::move(key), slot);
    m.styles_.push_back(std::move(style));
    return slot;
  };

  bool have_origin = false;
  std::vector<Bar> bars;
  std::vector<uint64_t> open_ends;  // ends of the enclosing bars, innermost last
  for (size_t b = 0; b < f.blocks.size(); ++b) {
    const etdump::RunBlock& block = f.blocks[b];
    bars.clear();
    for (uint32_t i = 0; i < block.event_count; ++i) {
      const uint32_t raw = block.first_event + i;
      const etdump::Event& e = f.events[raw];
      if (e.kind != etdump::EventKind::kProfile) continue;
      if ((!e.delegate && e.ref >= f.names.size()) || f.is_marker(e)) continue;
      // A wrapped 32-bit clock gets ExecuTorch's elapsed time; an interval that cannot be
      // measured draws zero-length.
      bars.push_back({e.start, e.start + inspect::elapsed_ticks_or_zero(e.start, e.end), raw, style_of(e)});
    }
    if (bars.empty()) continue;
    // Outer events first when two start together, so nesting depth comes out right.
    std::sort(bars.begin(), bars.end(), [](const Bar& a, const Bar& c) {
      return a.start != c.start ? a.start < c.start : a.end > c.end;
    });
    Track track;
    track.block = static_cast<uint32_t>(b);
    track.name = "#" + std::to_string(b) + " " + block.name;
    if (block.bundled_input_index >= 0) track.name += " (input " + std::to_string(block.bundled_input_index) + ")";
    track.origin = bars.front().start;
    track.events = bars.size();
    open_ends.clear();
    for (Bar bar : bars) {
      // A bar's lane is the number of bars still open when it starts. A bar can only join a
      // lane after the previous bar of that lane has ended, so lanes never overlap.
      while (!open_ends.empty() && open_ends.back() <= bar.start) open_ends.pop_back();
      const size_t depth = open_ends.size();
      open_ends.push_back(bar.end);
      bar.start -= track.origin;
      bar.end -= track.origin;
      if (track.lanes.size() <= depth) track.lanes.resize(depth + 1);
      track.lanes[depth].bars.push_back(bar);
      track.duration = std::max(track.duration, bar.end);
    }
    if (!have_origin || track.origin < m.global_origin_) m.global_origin_ = track.origin;
    have_origin = true;
    m.bar_count_ += track.events;
    m.tracks_.push_back(std::move(track));
  }
  std::vector<inspect::BlockCandidate> candidates;
  candidates.reserve(m.tracks_.size());
  for (const Track& t : m.tracks_) candidates.push_back({m.dump_->blocks[t.block].name, 1});
  m.main_track_ = inspect::main_block(candidates).value_or(0);
  return m;
}

uint64_t TimelineModel::extent(bool aligned) const {
  uint64_t e = 0;
  for (size_t t = 0; t < tracks_.size(); ++t) e = std::max(e, track_offset(t, aligned) + tracks_[t].duration);
  return e;
}

std::pair<uint64_t, uint64_t> TimelineModel::fit_range(bool aligned) const {
  uint64_t lo = UINT64_MAX, hi = 0;
  for (size_t t = 0; t < tracks_.size(); ++t) {
    if (dump_->blocks[tracks_[t].block].name == events::kBlockDefault) continue;
    lo = std::min(lo, track_offset(t, aligned));
    hi = std::max(hi, track_offset(t, aligned) + tracks_[t].duration);
  }
  if (lo == UINT64_MAX) return {0, extent(aligned)};
  return {lo, hi};
}

std::pair<size_t, size_t> TimelineModel::visible_range(const Lane& lane, double t0, double t1) {
  const auto& bars = lane.bars;
  // Ends are sorted as well as starts (bars of a lane never overlap), so both bounds are
  // binary searches.
  auto first = std::lower_bound(bars.begin(), bars.end(), t0,
                                [](const Bar& b, double t) { return static_cast<double>(b.end) < t; });
  auto last = std::upper_bound(first, bars.end(), t1,
                               [](double t, const Bar& b) { return t < static_cast<double>(b.start); });
  return {static_cast<size_t>(first - bars.begin()), static_cast<size_t>(last - bars.begin())};
}

void TimelineModel::layout_lane(const Lane& lane, double t0, double t1, double ticks_per_px, double min_px,
                                std::vector<DrawItem>& out) {
  const auto& bars = lane.bars;
  auto [i, n] = visible_range(lane, t0, t1);
  const double min_ticks = min_px * ticks_per_px;
  auto width = [&](size_t k) { return static_cast<double>(bars[k].end - bars[k].start); };
  while (i < n) {
    if (width(i) >= min_ticks) {
      out.push_back({static_cast<double>(bars[i].start), static_cast<double>(bars[i].end), static_cast<uint32_t>(i), 1});
      ++i;
      continue;
    }
    // Fold: swallow, with one binary search at a time, every bar starting within min_px of the
    // fold's end. In a lane without overlaps only the last bar found can be wide (a wide one
    // pushes every later start past the limit); it stays out and is drawn on its own.
    const double fold_start = static_cast<double>(bars[i].start);
    double fold_end = static_cast<double>(bars[i].end);
    size_t j = i + 1;
    while (j < n) {
      const double limit = fold_end + min_ticks;
      auto it = std::upper_bound(bars.begin() + static_cast<std::ptrdiff_t>(j), bars.begin() + static_cast<std::ptrdiff_t>(n),
                                 limit, [](double t, const Bar& b) { return t < static_cast<double>(b.start); });
      size_t k = static_cast<size_t>(it - bars.begin());
      if (k == j) break;
      if (width(k - 1) >= min_ticks) {
        if (k - 1 > j) fold_end = std::max(fold_end, static_cast<double>(bars[k - 2].end));
        j = k - 1;
        break;
      }
      fold_end = std::max(fold_end, static_cast<double>(bars[k - 1].end));
      j = k;
    }
    out.push_back({fold_start, fold_end, static_cast<uint32_t>(i), static_cast<uint32_t>(j - i)});
    i = j;
  }
}

InstructionRef TimelineModel::instruction_of(const Bar& bar) const {
  const etdump::Event& e = dump_->events[bar.raw];
  if (e.chain < 0 || e.instruction < 0) return {};
  if (styles_[bar.style].kind == BarKind::kFramework) return {};
  return {e.chain, e.instruction};
}

const std::vector<BarRef>& TimelineModel::bars_of(const InstructionRef& ref) const {
  if (ref == cached_ref_) return cached_bars_;
  cached_ref_ = ref;
  cached_bars_.clear();
  if (!ref.valid()) return cached_bars_;
  for (size_t t = 0; t < tracks_.size(); ++t) {
    for (size_t l = 0; l < tracks_[t].lanes.size(); ++l) {
      const auto& bars = tracks_[t].lanes[l].bars;
      for (size_t i = 0; i < bars.size(); ++i) {
        const etdump::Event& e = dump_->events[bars[i].raw];
        if (e.chain == ref.chain && e.instruction == ref.instruction &&
            styles_[bars[i].style].kind != BarKind::kFramework) {
          cached_bars_.push_back({static_cast<uint32_t>(t), static_cast<uint32_t>(l), static_cast<uint32_t>(i)});
        }
      }
    }
  }
  return cached_bars_;
}

std::string TimelineModel::describe(const Bar& bar, const EventLookup* lookup) const {
  const etdump::Event& e = dump_->events[bar.raw];
  const BarStyle& style = styles_[bar.style];
  std::string s = style.name + "\n";
  s += "duration " + duration_text(static_cast<double>(bar.end - bar.start));
  s += "\nstarts at " + duration_text(static_cast<double>(bar.start)) + " into the run";
  if (style.kind == BarKind::kFramework || e.chain < 0) {
    s += "\nframework event";
  } else {
    s += "\ninstruction " + std::to_string(e.instruction) + ", chain " + std::to_string(e.chain);
  }
  if (e.delegate) {
    const etdump::DelegateRef& ref = dump_->delegate_refs[e.ref];
    s += ref.id_int >= 0 ? "\ndelegate debug id " + std::to_string(ref.id_int) : "\ndelegate debug id '" + ref.id_str + "'";
  }
  if (lookup != nullptr) {
    const std::string more = lookup->annotation(bar.raw);
    if (!more.empty()) s += "\n" + more;
  }
  return s;
}

std::string TimelineModel::describe_fold(const Lane& lane, const DrawItem& item) const {
  // Name the most common event among the first few thousand, enough to say what the fold is.
  std::unordered_map<uint32_t, uint32_t> counts;
  const uint32_t sample = std::min<uint32_t>(item.count, 4096);
  for (uint32_t k = 0; k < sample; ++k) ++counts[lane.bars[item.first + k].style];
  uint32_t best = lane.bars[item.first].style, best_count = 0;
  for (const auto& [style, count] : counts) {
    if (count > best_count || (count == best_count && style < best)) best = style, best_count = count;
  }
  std::string s = fixed_text(item.count, 0) + " events folded over " + duration_text(item.end - item.start);
  s += "\nmostly " + styles_[best].name;
  s += "\nzoom in (mouse wheel) to see them one by one";
  return s;
}

}  // namespace etscope::gui
