// sdk::acyclic_groups and sdk::connected_groups (ephost/sdk/fusion_groups.hpp) on dependency graphs
// given as edges: the cases that must split, the ones that must not, and, over random graphs, the
// promise itself (no group is left and re-entered, a group that could stay whole does).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "ephost/sdk/fusion_groups.hpp"

namespace {

using ephost::sdk::acyclic_groups;
using ephost::sdk::connected_groups;
using ephost::sdk::NodeDependencies;
using Groups = std::vector<std::vector<size_t>>;
using Producers = std::vector<std::vector<size_t>>;

// `wanted` from the positions it lists.
std::vector<bool> wanting(size_t n, const std::set<size_t>& positions) {
  std::vector<bool> wanted(n, false);
  for (size_t p : positions) wanted[p] = true;
  return wanted;
}

TEST(FusionGroups, ChainStaysWhole) {
  const NodeDependencies deps(Producers{{}, {0}, {1}, {2}});
  EXPECT_EQ(acyclic_groups(deps, wanting(4, {0, 1, 2, 3})), (Groups{{0, 1, 2, 3}}));
}

TEST(FusionGroups, DiamondOfWantedNodesStaysWhole) {
  // 0 feeds 1 and 2, which both feed 3.
  const NodeDependencies deps(Producers{{}, {0}, {0}, {1, 2}});
  EXPECT_EQ(acyclic_groups(deps, wanting(4, {0, 1, 2, 3})), (Groups{{0, 1, 2, 3}}));
}

TEST(FusionGroups, DiamondWithAnUnwantedSideSplits) {
  // 0 -> 1 (not wanted) -> 3 and 0 -> 2 -> 3: fusing {0, 2, 3} would feed itself through 1.
  const NodeDependencies deps(Producers{{}, {0}, {0}, {1, 2}});
  const auto wanted = wanting(4, {0, 2, 3});
  EXPECT_EQ(connected_groups(deps, wanted), (Groups{{0, 2, 3}}));
  EXPECT_EQ(acyclic_groups(deps, wanted), (Groups{{0, 2}, {3}}));
}

TEST(FusionGroups, NodeReadDirectlyAndThroughAnotherSplits) {
  // The partition test's model: mul1 -> sigmoid (not wanted) -> mul2, and mul1 -> mul2.
  const NodeDependencies deps(Producers{{}, {0}, {0, 1}});
  EXPECT_EQ(acyclic_groups(deps, wanting(3, {0, 2})), (Groups{{0}, {2}}));
}

TEST(FusionGroups, HardSwishSplitsIntoStages) {
  // conv -> add -> clip (not wanted) -> mul <- add, mul -> div: {conv, add} then {mul, div}.
  const NodeDependencies deps(Producers{{}, {0}, {1}, {1, 2}, {3}});
  EXPECT_EQ(acyclic_groups(deps, wanting(5, {0, 1, 3, 4})), (Groups{{0, 1}, {3, 4}}));
}

TEST(FusionGroups, DisconnectedPartsAreSeparateGroupsInGraphOrder) {
  // Two interleaved chains: 0 -> 2 -> 4 and 1 -> 3; 5 alone.
  const NodeDependencies deps(Producers{{}, {}, {0}, {1}, {2}, {}});
  const auto wanted = wanting(6, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(connected_groups(deps, wanted), (Groups{{0, 2, 4}, {1, 3}, {5}}));
  EXPECT_EQ(acyclic_groups(deps, wanted), (Groups{{0, 2, 4}, {1, 3}, {5}}));
}

TEST(FusionGroups, UnwantedNodeBetweenTwoWantedOnesSeparatesThem) {
  const NodeDependencies deps(Producers{{}, {0}, {1}});
  EXPECT_EQ(acyclic_groups(deps, wanting(3, {0, 2})), (Groups{{0}, {2}}));
}

TEST(FusionGroups, GroupFedThroughAnotherGroupsExitStaysWhole) {
  // 0 -> 1 (not wanted) -> 3 -> 4 <- 2: {2, 3, 4} is never left and re-entered (only group {0} is
  // upstream of node 1), so it stays whole.
  const NodeDependencies deps(Producers{{}, {0}, {}, {1}, {2, 3}});
  EXPECT_EQ(acyclic_groups(deps, wanting(5, {0, 2, 3, 4})), (Groups{{0}, {2, 3, 4}}));
}

TEST(FusionGroups, NothingWantedGivesNoGroup) {
  const NodeDependencies deps(Producers{{}, {0}});
  EXPECT_TRUE(acyclic_groups(deps, wanting(2, {})).empty());
  EXPECT_TRUE(acyclic_groups(NodeDependencies(Producers{}), {}).empty());
}

TEST(FusionGroups, RefusesEdgesOutOfTopologicalOrderAndMiscountedFlags) {
  EXPECT_THROW(NodeDependencies(Producers{{1}, {}}), ephost::sdk::Error);
  EXPECT_THROW(NodeDependencies(Producers{{0}}), ephost::sdk::Error);
  const NodeDependencies deps(Producers{{}, {0}});
  EXPECT_THROW(acyclic_groups(deps, wanting(3, {0})), ephost::sdk::Error);
}

// ---- the promise, over random graphs -------------------------------------------------------------------

// reachable[u][v]: a path leads from u to v (u == v included).
std::vector<std::vector<bool>> reachability(const Producers& producers) {
  const size_t n = producers.size();
  std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
  for (size_t v = 0; v < n; ++v) {
    reach[v][v] = true;
    for (size_t u : producers[v])
      for (size_t w = 0; w < n; ++w)
        if (reach[w][u]) reach[w][v] = true;
  }
  return reach;
}

// True when a path leaves `group` through a node outside it and comes back.
bool left_and_reentered(const std::set<size_t>& group, const Producers& producers,
                        const std::vector<std::vector<bool>>& reach) {
  for (size_t outside = 0; outside < producers.size(); ++outside) {
    if (group.count(outside)) continue;
    bool from_group = false, to_group = false;
    for (size_t m : group) {
      from_group = from_group || reach[m][outside];
      to_group = to_group || reach[outside][m];
    }
    if (from_group && to_group) return true;
  }
  return false;
}

TEST(FusionGroups, RandomGraphsGiveConnectedGroupsThatNeverFormACycle) {
  std::mt19937 random(20240917);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = 2 + random() % 14;
    Producers producers(n);
    for (size_t v = 1; v < n; ++v)
      for (size_t u = 0; u < v; ++u)
        if (random() % 4 == 0) producers[v].push_back(u);
    std::vector<bool> wanted(n);
    for (size_t v = 0; v < n; ++v) wanted[v] = random() % 3 != 0;
    const NodeDependencies deps(producers);
    const auto reach = reachability(producers);

    std::vector<bool> covered(n, false);
    const Groups groups = acyclic_groups(deps, wanted);
    for (const auto& group : groups) {
      const std::set<size_t> members(group.begin(), group.end());
      EXPECT_FALSE(left_and_reentered(members, producers, reach)) << "trial " << trial;
      EXPECT_EQ(connected_groups(deps, wanting(n, members)).size(), 1u) << "trial " << trial << ": not connected";
      for (size_t m : group) {
        EXPECT_TRUE(wanted[m]) << "trial " << trial;
        EXPECT_FALSE(covered[m]) << "trial " << trial << ": node " << m << " in two groups";
        covered[m] = true;
      }
    }
    for (size_t v = 0; v < n; ++v) EXPECT_EQ(covered[v], static_cast<bool>(wanted[v])) << "trial " << trial;
    // A connected group that forms no cycle is claimed whole.
    for (const auto& connected : connected_groups(deps, wanted)) {
      const std::set<size_t> members(connected.begin(), connected.end());
      if (!left_and_reentered(members, producers, reach)) {
        EXPECT_NE(std::find(groups.begin(), groups.end(), connected), groups.end()) << "trial " << trial;
      }
    }
  }
}

}  // namespace
