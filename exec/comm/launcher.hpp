// SPDX-License-Identifier: Apache-2.0
// What an MPI launcher (mpirun, srun, hydra) tells a process through its environment. No MPI
// call: the CLI reads it before deciding whether to initialise MPI at all.
#pragma once

namespace hetsim::exec {

/// This process's rank as the launcher set it (Open MPI OMPI_COMM_WORLD_RANK, PMIx PMIX_RANK,
/// PMI/hydra PMI_RANK), or -1 when no MPI launcher started it.
int launcher_rank();

/// True when an MPI launcher started this process.
inline bool launched_by_mpi() { return launcher_rank() >= 0; }

/// The process that speaks for all: rank 0 under a launcher, the only process otherwise.
inline bool first_process() { return launcher_rank() <= 0; }

}  // namespace hetsim::exec
