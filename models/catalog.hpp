// SPDX-License-Identifier: Apache-2.0
// The device catalog: every GPU/CPU type hetsim knows, loaded from clusters/catalog/*.yaml.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "gpu_type.hpp"

namespace hetsim::models {

class Catalog {
 public:
  /// Throws std::out_of_range naming the unknown type and listing the known ones.
  const GpuType& by_name(const std::string& name) const;
  const GpuType* by_name_or_null(const std::string& name) const;
  std::vector<std::string> get_names() const;
  void add(GpuType type);  ///< replaces a type of the same name

  /// The catalog bundled with hetsim (HETSIM_CATALOG_DIR, set by CMake, or
  /// $HETSIM_CATALOG_DIR at run time). Loaded once, then cached.
  static const Catalog& builtin();

 private:
  std::map<std::string, GpuType> types_;
};

}  // namespace hetsim::models
