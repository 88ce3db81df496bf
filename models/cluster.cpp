// SPDX-License-Identifier: Apache-2.0
// Cluster topology bookkeeping: rank order of nodes and GPUs, GPU selectors, prices.
#include "cluster.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>

#include "text_match.hpp"

namespace hetsim::models {

const char* to_string(IntraFabricKind k) {
  switch (k) {
    case IntraFabricKind::kNvswitch: return "nvswitch";
    case IntraFabricKind::kNvlink: return "nvlink";
    case IntraFabricKind::kXgmi: return "xgmi";
    case IntraFabricKind::kPcie: return "pcie";
    case IntraFabricKind::kNone: return "none";
  }
  return "?";
}

const char* to_string(NicKind k) {
  switch (k) {
    case NicKind::kInfiniband: return "infiniband";
    case NicKind::kRoce: return "roce";
    case NicKind::kEthernet: return "ethernet";
  }
  return "?";
}

const char* to_string(ZoneFabricKind k) { return k == ZoneFabricKind::kFatTree ? "fat-tree" : "switch"; }

void Cluster::finalize() {
  nodes.clear();
  gpus.clear();
  for (int z = 0; z < static_cast<int>(zones.size()); ++z) {
    std::vector<int> seen_of_type(node_types.size(), 0);
    for (const NodeGroup& g : zones[z].groups) {
      const NodeType& type = node_types[g.node_type];
      for (int i = 0; i < g.count; ++i) {
        Node n;
        n.zone = z;
        n.node_type = g.node_type;
        n.index_in_group = seen_of_type[g.node_type]++;
        n.first_gpu = static_cast<int>(gpus.size());
        const int node_index = static_cast<int>(nodes.size());
        nodes.push_back(n);
        for (int l = 0; l < type.gpus_per_node; ++l) gpus.push_back(GpuSlot{node_index, l});
      }
    }
  }
}

std::string Cluster::gpu_types_label(const std::vector<int>& group) const {
  std::string label;
  for (int g : group) {
    const std::string& name = gpu_type(g).name;
    if (("+" + label + "+").find("+" + name + "+") == std::string::npos) label += (label.empty() ? "" : "+") + name;
  }
  return label;
}

std::string Cluster::node_name(int node) const {
  const Node& n = nodes[node];
  return zones[n.zone].name + "/" + node_types[n.node_type].name + "[" + std::to_string(n.index_in_group) + "]";
}

int Cluster::node_type_index(const std::string& n) const {
  for (size_t t = 0; t < node_types.size(); ++t)
    if (node_types[t].name == n) return static_cast<int>(t);
  return -1;
}

int Cluster::zone_index(const std::string& n) const {
  for (size_t z = 0; z < zones.size(); ++z)
    if (zones[z].name == n) return static_cast<int>(z);
  return -1;
}

const InterZoneLink* Cluster::link_between(int zone_a, int zone_b) const {
  for (const InterZoneLink& l : links) {
    if ((l.zone_a == zone_a && l.zone_b == zone_b) || (l.zone_a == zone_b && l.zone_b == zone_a)) return &l;
  }
  return nullptr;
}

double Cluster::price_per_hour(bool spot) const {
  double total = 0;
  for (const Node& n : nodes) {
    const NodeType& t = node_types[n.node_type];
    total += t.price_per_hour_at(spot);
  }
  return total;
}

namespace {

/// Parses "[a-b,c]" index lists. Returns false on syntax errors, and on an index of more than
/// nine digits, which it puts in `*huge` (the caller reports it out of range, as it does an index
/// >= `limit`). A range is expanded only up to the first index >= `limit`: `gpu[0-999999999]`
/// would otherwise take seconds and 4 GB before its error.
bool parse_index_list(std::string_view text, int limit, std::vector<int>* out, std::string* huge) {
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') return false;
  text = text.substr(1, text.size() - 2);
  if (text.empty()) return false;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    std::string_view item = text.substr(pos, comma - pos);
    const size_t dash = item.find('-');
    auto to_int = [huge](std::string_view s, int* v) {
      if (s.empty()) return false;
      for (char c : s) {
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
      }
      // Leading zeros add no magnitude ("gpu[0001]" is GPU 1): only the significant digits count.
      const std::string_view digits = s.substr(std::min(s.find_first_not_of('0'), s.size() - 1));
      if (digits.size() > 9) {
        *huge = std::string(s);
        return false;
      }
      *v = std::stoi(std::string(digits));
      return true;
    };
    int a = 0, b = 0;
    if (dash == std::string_view::npos) {
      if (!to_int(item, &a)) return false;
      b = a;
    } else if (!to_int(item.substr(0, dash), &a) || !to_int(item.substr(dash + 1), &b) || b < a) {
      return false;
    }
    for (int i = a; i <= std::min(b, std::max(a, limit)); ++i) out->push_back(i);
    pos = comma + 1;
  }
  return true;
}

/// The first range written high to low in a selector ("gpu[7-4]"): "7-4", else "".
std::string reversed_range(std::string_view selector) {
  for (size_t i = 0; i < selector.size(); ++i) {
    if (selector[i] != '-' || i == 0 || !std::isdigit(static_cast<unsigned char>(selector[i - 1]))) continue;
    size_t a = i, b = i + 1;
    while (a > 0 && std::isdigit(static_cast<unsigned char>(selector[a - 1]))) --a;
    while (b < selector.size() && std::isdigit(static_cast<unsigned char>(selector[b]))) ++b;
    if (b == i + 1 || i - a > 9 || b - i - 1 > 9) continue;
    if (std::stol(std::string(selector.substr(a, i - a))) > std::stol(std::string(selector.substr(i + 1, b - i - 1))))
      return std::string(selector.substr(a, b - a));
  }
  return "";
}

/// Splits "name[...]" into name and bracket part ("" when there is none).
void split_bracket(std::string_view part, std::string_view* name, std::string_view* brackets) {
  const size_t open = part.find('[');
  *name = part.substr(0, open);
  *brackets = open == std::string_view::npos ? std::string_view{} : part.substr(open);
}

}  // namespace

std::string backwards_range_problem(const std::string& selector) {
  const std::string r = reversed_range(selector);
  if (r.empty()) return {};
  const size_t dash = r.find('-');
  return "range " + r + " in '" + selector + "' runs backwards (expected the lower index first: " + r.substr(dash + 1) +
         "-" + r.substr(0, dash) + ")";
}

std::optional<std::vector<int>> Cluster::resolve_gpus(const std::string& selector, std::string* error) const {
  auto fail = [&](const std::string& why) -> std::optional<std::vector<int>> {
    if (error) *error = why;
    return std::nullopt;
  };
  const std::string forms = "'zone/type[i]/gpu[a-b]', 'type[i]/gpu[a-b]', 'type[i]' or 'gpu[a-b]'";
  if (selector.empty()) return fail("empty GPU selector (expected " + forms + ", or a GPU index)");
  // A number that is no whole index ("8.5", "-1") reads as a node type name otherwise.
  if (std::isdigit(static_cast<unsigned char>(selector[0])) || selector[0] == '-' || selector[0] == '+')
    return fail("'" + selector + "' is not a GPU index (expected a whole number from 0 to " +
                std::to_string(gpu_count() - 1) + ", or a selector " + forms + ")");
  if (const std::string why = backwards_range_problem(selector); !why.empty()) return fail(why);
  std::vector<std::string_view> parts;
  std::string_view rest = selector;
  while (true) {
    const size_t slash = rest.find('/');
    parts.push_back(rest.substr(0, slash));
    if (slash == std::string_view::npos) break;
    rest = rest.substr(slash + 1);
  }
  const std::string syntax = "bad GPU selector '" + selector + "' (expected " + forms + ")";
  if (parts.empty() || parts.size() > 3) return fail(syntax);

  // Global form: gpu[a-b]
  if (parts.size() == 1) {
    std::string_view name, br;
    split_bracket(parts[0], &name, &br);
    if (name == "gpu") {
      std::vector<int> ids;
      std::string huge;
      const bool parsed = parse_index_list(br, gpu_count(), &ids, &huge);
      const auto out_of_range = [&](const std::string& id) {
        return fail("GPU index " + id + " out of range (cluster has " + std::to_string(gpu_count()) + " GPUs, 0-" +
                    std::to_string(gpu_count() - 1) + ")");
      };
      if (!huge.empty()) return out_of_range(huge);
      if (!parsed) return fail(syntax);
      for (int id : ids)
        if (id >= gpu_count()) return out_of_range(std::to_string(id));
      return ids;
    }
  }

  // Node forms: [zone/]type[i][/gpu[a-b]]
  int zone = -1;
  size_t k = 0;
  if (parts.size() == 3 || (parts.size() == 2 && parts[1].rfind("gpu", 0) != 0)) {
    const auto it = std::find_if(zones.begin(), zones.end(), [&](const Zone& z) { return z.name == parts[0]; });
    if (it == zones.end()) {
      std::vector<std::string> known;
      for (const Zone& z : zones) known.push_back(z.name);
      return fail(unknown_name_message("unknown zone", std::string(parts[0]), known));
    }
    zone = static_cast<int>(it - zones.begin());
    k = 1;
  }
  if (k >= parts.size()) return fail(syntax);
  std::string_view type_name, type_br;
  split_bracket(parts[k], &type_name, &type_br);
  const auto t = std::find_if(node_types.begin(), node_types.end(),
                              [&](const NodeType& nt) { return nt.name == type_name; });
  if (t == node_types.end()) {
    std::vector<std::string> known;
    for (const NodeType& nt : node_types) known.push_back(nt.name);
    return fail(unknown_name_message("unknown node type", std::string(type_name), known));
  }
  const int type_index = static_cast<int>(t - node_types.begin());
  std::vector<int> node_ids;
  // Nodes of this type (in this zone, or cluster-wide when no zone is given), in rank order.
  std::vector<int> candidates;
  for (int n = 0; n < static_cast<int>(nodes.size()); ++n) {
    if (nodes[n].node_type == type_index && (zone < 0 || nodes[n].zone == zone)) candidates.push_back(n);
  }
  const auto node_out_of_range = [&](const std::string& i) {
    return fail("node " + std::string(type_name) + "[" + i + "] out of range (" + std::to_string(candidates.size()) +
                " node(s) of that type" + (zone >= 0 ? " in zone '" + zones[zone].name + "'" : std::string()) + ")");
  };
  std::string huge;
  if (!parse_index_list(type_br, static_cast<int>(candidates.size()), &node_ids, &huge))
    return huge.empty() ? fail(syntax) : node_out_of_range(huge);
  std::vector<int> local_ids;
  if (k + 1 < parts.size()) {
    std::string_view gname, gbr;
    split_bracket(parts[k + 1], &gname, &gbr);
    const auto gpu_out_of_range = [&](const std::string& l) {
      return fail("GPU " + l + " out of range (node type '" + t->name + "' has " + std::to_string(t->gpus_per_node) +
                  " GPUs)");
    };
    if (gname != "gpu") return fail(syntax);
    if (!parse_index_list(gbr, t->gpus_per_node, &local_ids, &huge))
      return huge.empty() ? fail(syntax) : gpu_out_of_range(huge);
    for (int l : local_ids)
      if (l >= t->gpus_per_node) return gpu_out_of_range(std::to_string(l));
  } else {
    for (int l = 0; l < t->gpus_per_node; ++l) local_ids.push_back(l);
  }
  std::vector<int> ids;
  for (int i : node_ids) {
    if (i >= static_cast<int>(candidates.size())) return node_out_of_range(std::to_string(i));
    for (int l : local_ids) ids.push_back(nodes[candidates[i]].first_gpu + l);
  }
  return ids;
}

}  // namespace hetsim::models
