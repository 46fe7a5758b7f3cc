// Models whose claims can form a cycle: x -> A -> a; a -> B -> b; (a, b) -> C -> y. A provider that
// fuses A and C without B makes a group that, contracted, feeds B and is fed by it: a cycle, which the
// host refuses. Built from ops a plugin is likely to claim (A, C) and not (B).
#pragma once

#include <string>
#include <vector>

namespace ephost_cts {

struct DiamondModel {
  std::string description;  // "Add -> Neg -> Mul"
  std::string bytes;        // serialized ModelProto
};

// Every combination the kit tries, most common ops first.
std::vector<DiamondModel> diamond_models();

}  // namespace ephost_cts
