// SPDX-License-Identifier: Apache-2.0
// Fixture for the layering_check self-test: a models/ file that breaks the layering rule.
// Not compiled. The check must reject it (tests/layering/CMakeLists.txt, WILL_FAIL).
#pragma once
#include <simgrid/s4u.hpp>
#include <cuda_runtime.h>
