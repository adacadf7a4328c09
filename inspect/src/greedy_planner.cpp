#include "etscope/inspect/greedy_planner.h"

#include <algorithm>
#include <numeric>

namespace etscope::inspect {
namespace {

struct Placed {
  uint64_t offset;
  uint64_t size;
  Lifetime lifetime;
};

struct SharedObject {
  uint64_t size = 0;
  std::vector<Placed> allocations;
};

}  // namespace

uint64_t round_up(uint64_t bytes, uint64_t alignment) {
  if (alignment <= 1) return bytes;
  return (bytes + alignment - 1) / alignment * alignment;
}

GreedyPlan GreedyPlanner::plan(std::span<const GreedyRequest> requests, uint64_t alignment) {
  GreedyPlan result;
  result.offsets.assign(requests.size(), 0);
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return round_up(requests[a].bytes, alignment) > round_up(requests[b].bytes, alignment);
  });

  std::vector<SharedObject> objects;
  std::vector<size_t> object_of(requests.size(), 0);
  std::vector<uint64_t> offset_in_object(requests.size(), 0);
  for (size_t index : order) {
    const GreedyRequest& r = requests[index];
    if (r.lifetime.empty()) continue;
    const uint64_t size = round_up(r.bytes, alignment);
    bool placed = false;
    // First choice: an object nothing else uses while this spec is live.
    for (size_t o = 0; o < objects.size() && !placed; ++o) {
      SharedObject& obj = objects[o];
      bool disjoint = std::none_of(obj.allocations.begin(), obj.allocations.end(),
                                   [&](const Placed& p) { return p.lifetime.overlaps(r.lifetime); });
      if (!disjoint) continue;
      obj.allocations.push_back(Placed{0, size, r.lifetime});
      obj.size = std::max(obj.size, size);
      object_of[index] = o;
      offset_in_object[index] = 0;
      placed = true;
    }
    // Second choice: above everything live at the same time, if the object is big enough.
    for (size_t o = 0; o < objects.size() && !placed; ++o) {
      SharedObject& obj = objects[o];
      uint64_t top = 0;
      for (const Placed& p : obj.allocations) {
        if (p.lifetime.overlaps(r.lifetime)) top = std::max(top, p.offset + p.size);
      }
      if (top + size > obj.size) continue;
      obj.allocations.push_back(Placed{top, size, r.lifetime});
      object_of[index] = o;
      offset_in_object[index] = top;
      placed = true;
    }
    if (!placed) {
      objects.push_back(SharedObject{size, {Placed{0, size, r.lifetime}}});
      object_of[index] = objects.size() - 1;
      offset_in_object[index] = 0;
    }
  }

  std::vector<uint64_t> base(objects.size(), 0);
  uint64_t total = 0;
  for (size_t o = 0; o < objects.size(); ++o) {
    base[o] = total;
    total += objects[o].size;
    result.object_sizes.push_back(objects[o].size);
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].lifetime.empty() || objects.empty()) continue;
    result.offsets[i] = base[object_of[i]] + offset_in_object[i];
  }
  result.total_bytes = total;
  return result;
}

}  // namespace etscope::inspect
