// TimelineModel: the profile events of an ETDump laid out for drawing, one track per run block.
//
// Built once on the loading thread, read every frame, so every per-frame query is logarithmic
// in the number of events (Tracy's design): inside a track, events are split into lanes by
// nesting depth (Method::execute > OPERATOR_CALL > native_call_*), and each lane is a
// time-sorted array of non-overlapping bars. A frame binary-searches the visible window of each
// lane and folds runs of bars narrower than a few pixels into one draw item, jumping over each
// run with another binary search, so a zoomed-out view of a million events costs about as much
// as the number of pixels, not of events.
//
// Times are raw ETDump timestamps (nanoseconds with ExecuTorch's default clock), stored relative
// to the start of their track.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "etscope/etdump/etdump_reader.h"
#include "etscope/core/event_names.h"
#include "model/instruction_ref.h"

namespace etscope::gui {

class EventLookup;

/// What a bar is: the events::classify class of its event.
using BarKind = events::EventClass;

/// One profile event: [start, end) in ticks relative to its track's origin.
struct Bar {
  uint64_t start = 0;
  uint64_t end = 0;
  uint32_t raw = 0;    ///< Index into EtDumpFile::events.
  uint32_t style = 0;  ///< Index into TimelineModel::styles().
};

struct Lane {
  std::vector<Bar> bars;  ///< Sorted by start; ends sorted too (bars never overlap).
};

struct Track {
  std::string name;      ///< "#3 Execute".
  uint32_t block = 0;    ///< Index into EtDumpFile::blocks.
  uint64_t origin = 0;   ///< Raw timestamp of the track's first event.
  uint64_t duration = 0; ///< End of its last event, relative to origin.
  size_t events = 0;
  std::vector<Lane> lanes;
};

/// How bars of one event name look.
struct BarStyle {
  std::string name;      ///< The event name as recorded ("native_call_add.out", delegate id).
  std::string label;     ///< Shorter text for inside the bar ("add.out": events::native_call_op).
  BarKind kind = BarKind::kOther;
  uint32_t hash = 0;     ///< Stable hash of the label, to pick a colour.
};

/// What a frame draws for a lane: one bar (count == 1) or a fold of `count` bars.
struct DrawItem {
  double start = 0;      ///< Relative ticks.
  double end = 0;
  uint32_t first = 0;    ///< Index of the first bar in the lane.
  uint32_t count = 1;
};

/// A bar's address.
struct BarRef {
  uint32_t track = 0;
  uint32_t lane = 0;
  uint32_t index = 0;
};

class TimelineModel {
 public:
  /// Lays out every profile event of `dump` (debug and allocation events are not drawn).
  /// Tracks without profile events are left out.
  static TimelineModel build(std::shared_ptr<const etdump::EtDumpFile> dump);

  const etdump::EtDumpFile& dump() const { return *dump_; }
  const std::vector<Track>& tracks() const { return tracks_; }
  const std::vector<BarStyle>& styles() const { return styles_; }
  size_t bar_count() const { return bar_count_; }
  /// Raw timestamp of the earliest event of all tracks.
  uint64_t global_origin() const { return global_origin_; }
  /// Where a track's relative time 0 sits on a shared axis: 0 when runs are aligned at their
  /// start, else its distance from the earliest track.
  uint64_t track_offset(size_t track, bool aligned) const {
    return aligned ? 0 : tracks_[track].origin - global_origin_;
  }
  /// Length of the axis that shows every track.
  uint64_t extent(bool aligned) const;
  /// The axis range [first, second) the view opens on: the execution blocks ("Execute",
  /// "Warmup", ...), not the load block ("Default"), whose length (file reading, allocation) can
  /// be far from a run's and would set the scale; every track when there is nothing else.
  std::pair<uint64_t, uint64_t> fit_range(bool aligned) const;

  /// The track a run is shown by (the Compare view's): inspect::main_block among the tracks'
  /// blocks, each one execution; null when there are no tracks.
  const Track* main_track() const { return main_track_ < tracks_.size() ? &tracks_[main_track_] : nullptr; }

  /// Indices [first, last) of the bars of `lane` that intersect [t0, t1] (relative ticks).
  static std::pair<size_t, size_t> visible_range(const Lane& lane, double t0, double t1);

  /// Appends to `out` what to draw of `lane` over [t0, t1] at `ticks_per_px`: bars at least
  /// `min_px` wide as themselves; runs of narrower bars, and the gaps under `min_px` between
  /// them, as one folded item.
  static void layout_lane(const Lane& lane, double t0, double t1, double ticks_per_px, double min_px,
                          std::vector<DrawItem>& out);

  const Bar& bar(const BarRef& ref) const { return tracks_[ref.track].lanes[ref.lane].bars[ref.index]; }
  /// The instruction a bar belongs to, or an invalid ref for framework events.
  InstructionRef instruction_of(const Bar& bar) const;
  /// Every bar of an instruction (all tracks), cached for the last instruction asked.
  const std::vector<BarRef>& bars_of(const InstructionRef& ref) const;

  /// Tooltip text of one bar: name, duration, instruction, and what `lookup` (may be null)
  /// knows of its graph nodes (module, stack trace).
  std::string describe(const Bar& bar, const EventLookup* lookup) const;
  /// Tooltip text of a folded item.
  std::string describe_fold(const Lane& lane, const DrawItem& item) const;

 private:
  std::shared_ptr<const etdump::EtDumpFile> dump_;
  std::vector<Track> tracks_;
  std::vector<BarStyle> styles_;
  size_t bar_count_ = 0;
  uint64_t global_origin_ = 0;
  size_t main_track_ = 0;
  mutable InstructionRef cached_ref_;
  mutable std::vector<BarRef> cached_bars_;
};

}  // namespace etscope::gui
