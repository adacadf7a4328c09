// Counts heap allocations made through operator new while counting is on, so tests can assert
// that a piece of code (a Method's execute(), a tracer's hot path) allocates nothing.
#pragma once

#include <cstddef>

namespace etscope::testing {

/// Starts counting from zero.
void start_counting_allocations();
/// Stops counting and returns the number of operator new calls since start.
size_t stop_counting_allocations();

}  // namespace etscope::testing
