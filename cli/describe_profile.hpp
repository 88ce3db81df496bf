// SPDX-License-Identifier: Apache-2.0
// `hetsim describe` of a calibrated profile (kind: profile): what it overrides, in units.
#pragma once
#include <ostream>
#include <string>

#include "json_writer.hpp"
#include "profile.hpp"

namespace hetsim::cli {

/// Table text: the profile's source, then per device type the figures it sets (the catalog
/// keeps the rest), then per link class the achieved bandwidth and latency.
void print_profile(const models::Profile& p, const std::string& file, std::ostream& out);
/// The same as JSON members of the file's object: name, source, devices{}, links{}.
void json_profile(models::JsonOut& j, const models::Profile& p);

}  // namespace hetsim::cli
