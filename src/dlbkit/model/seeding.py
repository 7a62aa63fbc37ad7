"""Named random streams derived from an experiment's seed: one helper for every engine and the runtime.

Same seed, same trace (DESIGN.md "Engines"): every random draw comes from a
:class:`numpy.random.Generator` whose :class:`~numpy.random.SeedSequence` is derived from the
experiment's seed here. Each engine declares its *layout* once: the names of its streams in spawn
order. Stream *k* of a layout is child *k* of ``SeedSequence(seed)`` (``spawn(len(layout))[k]``), so
streams are independent and a stream does not change when another one is drawn from more or less.

The layouts are the families' own: each family declares those of its engines in
``dlbkit.families.<family>.model.seeding`` (one layout of the family's name, and any other an engine
of it draws through), with a table of which engine and real run uses which. They are the derivations
the engines used before this module existed, kept bit for bit so that no result changes; that is why
the same name sits at different indices in different layouts and why a layout may be *root* (its one
stream is the seed's SeedSequence itself, for an engine that seeded ``default_rng(seed)``).

A stream added at the end of a layout leaves the others as they were (child *k* of a SeedSequence
does not depend on how many children are spawned), which is how a layout gains a stream (the
information layer's ``info``, :mod:`dlbkit.info`) without changing a result.

A real run derives its streams with the layout and the stream names of its family's simulator, so
that a balancer given the same seed gets the same generator in both (its random draws differ only
where the two runs' decisions do): ``balancer`` for the balancer, ``availability`` for an emulated
platform's availability (:meth:`dlbkit.runtime.emulation.Emulation.from_platform`), ``info`` for
an information model. Where a simulator's one balancer object decides for every node but the
runtime has one per process, each process's stream is a child of the layout's stream
(``streams(seed, LAYOUT).seq("balancer").spawn(n)[w]`` for process *w* of *n*).

A seed is anything :class:`~numpy.random.SeedSequence` accepts (an int, a sequence of ints, None for
fresh entropy) or a SeedSequence (e.g. a stream of another layout). As :meth:`SeedSequence.spawn`
does, deriving from a SeedSequence object advances its spawn counter: pass a fresh one per run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dlbkit.errors import ConfigError

__all__ = ["Layout", "Streams", "streams"]


@dataclass(frozen=True)
class Layout:
    """An engine's named streams in spawn order; *root*: the one stream is the seed's SeedSequence itself."""

    name: str
    names: tuple[str, ...]
    root: bool = False

    def __post_init__(self):
        if len(set(self.names)) != len(self.names) or not self.names:
            raise ValueError(f"layout {self.name!r}: stream names must be distinct and at least one")
        if self.root and len(self.names) != 1:
            raise ValueError(f"layout {self.name!r}: a root layout has exactly one stream")


class Streams:
    """The named streams of one *layout* derived from *seed* (see :func:`streams`)."""

    __slots__ = ("layout", "_seqs")

    def __init__(self, seed, layout: Layout):
        root = seed if isinstance(seed, np.random.SeedSequence) else _root(seed)
        self.layout = layout
        children = [root] if layout.root else root.spawn(len(layout.names))
        self._seqs = dict(zip(layout.names, children))

    def seq(self, name: str) -> np.random.SeedSequence:
        """The SeedSequence of stream *name*."""
        try:
            return self._seqs[name]
        except KeyError:
            raise ConfigError("stream", name, f"one of the {self.layout.name} layout's streams: "
                              + ", ".join(self.layout.names)) from None

    def rng(self, name: str) -> np.random.Generator:
        """A fresh Generator on stream *name* (each call starts the stream again)."""
        return np.random.default_rng(self.seq(name))


def streams(seed, layout: Layout) -> Streams:
    """The named random streams of *layout* derived from the experiment's *seed*."""
    return Streams(seed, layout)


def _root(seed) -> np.random.SeedSequence:
    try:
        return np.random.SeedSequence(seed)
    except (TypeError, ValueError) as e:
        raise ConfigError("seed", seed, f"an int >= 0, a sequence of them, None or a SeedSequence ({e})") from None
