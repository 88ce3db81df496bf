// SPDX-License-Identifier: Apache-2.0
// Runs a 3-stage pipeline under mpirun where rank 1 fails at step 2, by throwing or by killing
// itself (argv[1] = throw | kill). Checked by mpi_fault_check.cmake: every rank must be gone
// with a non-zero exit within 30 s and the output must name rank 1.
#include <iostream>

#include "comm/mpi_communicator.hpp"
#include "exec_test_support.hpp"
#include "runner/run.hpp"

int main(int argc, char** argv) {
  using namespace hetsim::exec;
  MpiSession mpi(&argc, &argv);
  RunSpec spec;
  spec.cluster = testing::cpu_cluster(3, 0);
  spec.workload = testing::tiny_workload();
  spec.plan = testing::plan("pp3", {testing::replica(3, {testing::stage(2, 0), testing::stage(1, 1), testing::stage(1, 2)})});
  spec.steps = 5;
  spec.options.fail_rank = 1;
  spec.options.fail_step = 2;
  spec.options.fail_mode = argc > 1 ? argv[1] : "throw";
  MpiCommunicator comm;
  try {
    run_rank_or_abort(spec, comm);
  } catch (const std::exception& e) {
    write_stderr_line("rank " + std::to_string(comm.get_rank()) + ": " + e.what());
    return 1;
  }
  std::cout << "rank " << comm.get_rank() << " finished without the injected fault\n";
  return 0;
}
