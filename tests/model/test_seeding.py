"""Named random streams: each engine's layout gives exactly the SeedSequence derivation the engine
used before the helper (checked against direct SeedSequence calls), so no result changed."""

import numpy as np
import pytest

from dlbkit import ConfigError
from dlbkit.families.divisible.model.seeding import DIVISIBLE
from dlbkit.families.spmd.model.seeding import SPMD, SPMD_SWEEP
from dlbkit.families.tree.model.seeding import SUPERSTEP, TREE
from dlbkit.model.seeding import Layout, streams

SEEDS = [0, 1, 7, 12345, 2**40 + 3, [3, 1]]


def draws(g: np.random.Generator):
    return g.integers(0, 2**62, size=8).tolist() + g.random(4).tolist()


def same(a: np.random.SeedSequence, b: np.random.SeedSequence) -> bool:
    return draws(np.random.default_rng(a)) == draws(np.random.default_rng(b))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("layout, old_names", [
    (DIVISIBLE, ("costs", "availability", "balancer")),  # divisible: SeedSequence(seed).spawn(3)
    (TREE, ("availability", "balancer")),  # tree_async: spawn(2) (then the info layer's stream, added last)
    (SPMD, ("noise", "availability", "balancer")),  # spmd: spawn(3)
], ids=["divisible", "tree", "spmd"])
def test_layout_is_the_engines_old_spawn(layout, old_names, seed):
    old = np.random.SeedSequence(seed).spawn(len(old_names))
    s = streams(seed, layout)
    assert layout.names[:len(old_names)] == old_names  # a stream added later goes at the end
    for k, name in enumerate(old_names):
        assert same(s.seq(name), old[k]), name


@pytest.mark.parametrize("seed", SEEDS)
def test_spmd_sweep_layout_and_its_run_stream_feeding_the_spmd_layout(seed):
    scn, run = np.random.SeedSequence(seed).spawn(2)
    s = streams(seed, SPMD_SWEEP)
    assert same(s.seq("scenario"), scn) and same(s.seq("run"), run)
    # simulate_spmd(seed=run) spawns its three streams from the run SeedSequence
    inner_old = np.random.SeedSequence(seed).spawn(2)[1].spawn(3)
    inner = streams(streams(seed, SPMD_SWEEP).seq("run"), SPMD)
    for k, name in enumerate(SPMD.names):
        assert same(inner.seq(name), inner_old[k])


@pytest.mark.parametrize("seed", [0, 1, 99, 2**33])
def test_superstep_layout_is_default_rng_of_the_seed(seed):
    assert draws(streams(seed, SUPERSTEP).rng("balancer")) == draws(np.random.default_rng(seed))


@pytest.mark.parametrize("seed", SEEDS)
def test_runtime_derivations_are_expressible(seed):
    """map/Loop: spawn(3)[2], as before the real runs took their simulator's layouts; an emulation's
    availability: spawn(2)[1] (the same child as spawn(3)[1]); per-process streams (a tree's workers, a
    cluster's nodes): the children of a layout's stream, as spawning from that stream gives them."""
    s = streams(seed, DIVISIBLE)
    assert same(s.seq("balancer"), np.random.SeedSequence(seed).spawn(3)[2])
    assert same(s.seq("availability"), np.random.SeedSequence(seed).spawn(2)[1])
    old = np.random.SeedSequence(seed).spawn(3)[2].spawn(5)
    new = streams(seed, DIVISIBLE).seq("balancer").spawn(5)
    assert all(same(a, b) for a, b in zip(new, old))


def test_streams_are_distinct_and_rng_restarts_the_stream():
    s = streams(5, DIVISIBLE)
    firsts = {draws(s.rng(n))[0] for n in DIVISIBLE.names}
    assert len(firsts) == 3
    assert draws(s.rng("costs")) == draws(s.rng("costs"))


def test_a_seed_sequence_is_taken_as_the_root():
    root = np.random.SeedSequence(11)
    assert same(streams(root, TREE).seq("balancer"), np.random.SeedSequence(11).spawn(2)[1])


def test_unknown_stream_and_bad_seed_name_what_is_allowed():
    with pytest.raises(ConfigError, match="costs, availability, balancer"):
        streams(0, DIVISIBLE).seq("noise")
    with pytest.raises(ConfigError, match="seed"):
        streams(-1, TREE)


def test_layouts_are_well_formed():
    """Every family's engines draw through a layout of the family's name, declared in the family's
    ``model/seeding.py`` (docs/design.md, "a family" step 3); the others there are the SPMD sweep's and the
    superstep engine's. The emulation's default draws availability where a family's layout puts it second."""
    import importlib

    from dlbkit.families.registry import PACKAGES
    from dlbkit.runtime.emulation import EMULATION
    layouts = {}
    for name in PACKAGES:
        module = importlib.import_module(f"dlbkit.families.{name}.model.seeding")
        own = {x.name: x for x in vars(module).values() if isinstance(x, Layout)}
        assert name in own, name
        layouts.update(own)
    assert set(layouts) == set(PACKAGES) | {"spmd-sweep", "superstep"}
    for x in layouts.values():
        if not x.root and "availability" in x.names and x.names.index("availability") == 1:
            assert same(streams(3, x).seq("availability"), streams(3, EMULATION).seq("availability")), x.name
    with pytest.raises(ValueError):
        Layout("x", ("a", "a"))
    with pytest.raises(ValueError):
        Layout("x", ("a", "b"), root=True)
