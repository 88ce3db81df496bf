// SPDX-License-Identifier: Apache-2.0
// The device catalog: every GPU/CPU type hetsim knows, loaded from clusters/catalog/*.yaml.
#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu_type.hpp"

namespace hetsim::models {

/// The spelling-insensitive key of a device name: lower case, only letters and digits, with the
/// vendor and brand words that tools print before the product dropped ("NVIDIA", "Tesla",
/// "GeForce", "AMD", "Instinct"). "NVIDIA A100-SXM4-80GB" (nvidia-smi), "A100_SXM4_80GB" and
/// "a100-sxm4-80gb" have one key; "a100" and "a100-sxm4-40gb" do not share it.
std::string device_name_key(std::string_view name);

/// The words of device_name_key before they are joined: "NVIDIA H100 SXM" -> {"h100", "sxm"}.
std::vector<std::string> device_name_words(std::string_view name);

/// Whether each of `words` starts some word of `of` ({"a100", "80gb"} and {"h100", "sxm"} start
/// words of a100-sxm4-80gb and h100-sxm5-80gb). False for no words.
bool words_start_words(const std::vector<std::string>& words, const std::vector<std::string>& of);

/// Whether `spelling` names type t: its catalog name; a spelling with the device_name_key of an
/// alias; or, unless t.exact_name, one with the key of its name. Catalog::by_name_or_null and
/// profiles (apply_profile) match by this one rule.
bool names_type(const GpuType& t, std::string_view spelling);

class Catalog {
 public:
  /// Throws std::out_of_range naming the unknown type and listing the known ones.
  const GpuType& by_name(const std::string& name) const;
  /// The type of that catalog name; else the one the spelling names (names_type); nullptr when
  /// none does. The type carries its catalog name, so inputs that
  /// spell it otherwise still load, report and write it the catalog's way.
  const GpuType* by_name_or_null(const std::string& name) const;
  std::vector<std::string> get_names() const;
  /// Replaces a type of the same name (and the spellings of the old one). Throws
  /// std::invalid_argument when find_spelling_clash finds one (the loader asks it first).
  void add(GpuType type);
  /// The loaders' error text for a name by_name_or_null does not know: "unknown GPU 'x' (...)"
  /// with the types a short name could mean ("a100": the four A100 parts) or a likely typo.
  std::string unknown_gpu_message(const std::string& name) const;
  /// A spelling of a type that reads (device_name_key) like a spelling of another type.
  struct SpellingClash {
    std::size_t spelling = 0;  ///< 0: the type's name; i > 0: its aliases[i - 1]
    std::string key;           ///< the key both read as
    std::string owner;         ///< catalog name of the other type
  };
  /// The first of t's name and aliases that reads like another type's; nullopt when none.
  std::optional<SpellingClash> find_spelling_clash(const GpuType& t) const;
  /// Every one of them, in the order name, aliases (a loader reports them all at once).
  std::vector<SpellingClash> find_spelling_clashes(const GpuType& t) const;

  /// The catalog bundled with hetsim (HETSIM_CATALOG_DIR, set by CMake, or
  /// $HETSIM_CATALOG_DIR at run time). Loaded once, then cached.
  static const Catalog& builtin();
  /// The folder builtin() loads: $HETSIM_CATALOG_DIR when set, else the bundled one.
  static std::string builtin_dir();
  /// Whether $HETSIM_CATALOG_DIR chose builtin_dir() (else the build set it).
  static bool builtin_dir_from_environment();
  /// The folder the catalog was read from (load_catalog_dir), which unknown_gpu_message names;
  /// empty for a catalog built in code.
  void set_folder(std::string dir) { folder_ = std::move(dir); }

 private:
  std::string folder_;
  std::map<std::string, GpuType> types_;
  std::map<std::string, std::string> name_of_key_;  ///< device_name_key -> catalog name
};

}  // namespace hetsim::models
