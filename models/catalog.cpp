// SPDX-License-Identifier: Apache-2.0
// The device catalog: lookup by name and the bundled catalog (clusters/catalog/*.yaml).
#include "catalog.hpp"

#include <cstdlib>
#include <stdexcept>

#include "input_loader.hpp"
#include "yaml_reader.hpp"

#ifndef HETSIM_CATALOG_DIR
#define HETSIM_CATALOG_DIR "clusters/catalog"
#endif

namespace hetsim::models {

const GpuType& Catalog::by_name(const std::string& name) const {
  if (const GpuType* t = by_name_or_null(name)) return *t;
  std::string msg = "unknown GPU '" + name + "' (";
  if (const auto guess = did_you_mean(name, get_names())) msg += "did you mean '" + *guess + "'? ";
  throw std::out_of_range(msg + "known: " + join_names(get_names()) + ")");
}

const GpuType* Catalog::by_name_or_null(const std::string& name) const {
  const auto it = types_.find(name);
  return it == types_.end() ? nullptr : &it->second;
}

std::vector<std::string> Catalog::get_names() const {
  std::vector<std::string> names;
  names.reserve(types_.size());
  for (const auto& [name, type] : types_) names.push_back(name);
  return names;
}

void Catalog::add(GpuType type) {
  std::string name = type.name;
  types_.insert_or_assign(std::move(name), std::move(type));
}

const Catalog& Catalog::builtin() {
  // $HETSIM_CATALOG_DIR lets an installed binary or a test point at another catalog.
  static const Catalog catalog = [] {
    const char* env = std::getenv("HETSIM_CATALOG_DIR");
    return load_catalog_dir(env != nullptr && *env != '\0' ? env : HETSIM_CATALOG_DIR);
  }();
  return catalog;
}

}  // namespace hetsim::models
