"""dlbkit for Dask users: ``dask.compute(x, scheduler=dlbkit.dask.scheduler(balancer="heft", workers=4))``
runs a Dask collection's graph under a dlbkit mapping balancer
(:mod:`dlbkit.families.graph.face.dask_scheduler`). Dask itself is needed only to build the collection."""

from dlbkit.families.graph.face.dask_scheduler import DaskScheduler, scheduler

__all__ = ["DaskScheduler", "scheduler"]
