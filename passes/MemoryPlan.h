//===- passes/MemoryPlan.h - Buffer slots for a lowered program -*- C++ -*-===//
//
// Assigns every value a program's steps write to a buffer slot. A walk over the
// steps in order computes liveness (a value lives from the step that writes it to
// the last step that reads it; returned values live to the end); a slot whose value
// died is reused by a later value that fits (best fit, else a new slot). A kernel
// without data movement writes an output into the buffer of an input that dies at
// that step when both have the same element count and element size (in place: its
// kernel reads each element, or each reduction segment, before writing it). A
// parameter the caller donates is such a buffer too, once the program no longer
// needs its value. The plan's figures (peak bytes in use, the slots' total, the sum
// of all intermediates) are kept in the program's MemoryStats.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/Program.h"

#include <string>
#include <vector>

namespace graphc::passes {

/// What the caller allows the planner.
struct PlanOptions {
  /// By parameter position: the caller donates that parameter's buffer, so the
  /// program may overwrite it once the parameter's value is dead.
  std::vector<bool> donated;
  /// Let kernels write outputs over dead inputs.
  bool inPlace = true;
};

/// Plans the slots of `p` and fills its storage, slots and MemoryStats.
void planMemory(Program& p, const PlanOptions& options = {});

/// The planned program of `g`: fusion partition, steps and memory plan.
Program lowerToProgram(const ir::Graph& g, const PlanOptions& options = {});

/// The text of lowerToProgram(g, options): what `graphc dump --lowered` shows.
std::string printLoweredProgram(const ir::Graph& g, const PlanOptions& options = {});

} // namespace graphc::passes
