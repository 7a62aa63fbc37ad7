"""Where this process stands in an MPI job, read from the launcher's environment before mpi4py is
imported: every rank checks the same arguments, and only rank 0 says what is wrong (``dlbkit simulate
--executor mpi``, ``dlbkit run --backend mpi``)."""

from __future__ import annotations

import os

__all__ = ["env_rank", "env_size"]


def env_rank() -> int:
    """This process's MPI rank from the launcher's environment (0 when not launched by mpiexec)."""
    for var in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK", "SLURM_PROCID"):
        v = os.environ.get(var)
        if v is not None and v.isdigit():
            return int(v)
    return 0


def env_size() -> int:
    """The number of ranks the launcher started this process among (1 when not launched by mpiexec)."""
    for var in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE"):
        v = os.environ.get(var)
        if v is not None and v.isdigit():
            return int(v)
    return 1
