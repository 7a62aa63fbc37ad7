"""Test hosts on one machine: Linux network namespaces, each with its own address, joined by a bridge.

:class:`Hosts` makes them (as root, with ``ip netns``; else :func:`pytest.skip` with the reason), and an
``ssh`` stand-in for Hydra's launcher (``HYDRA_LAUNCHER_EXEC``) that runs a proxy "on" a host by
``ip netns exec`` into its namespace, as ``ssh HOST CMD`` would run it on a machine. A host may be given
a private status directory (a tmpfs mounted over the launcher's, in a mount namespace of its own), which
is what another machine without a shared filesystem looks like to ``dlbkit run --ranks``. Every
namespace, link and process made is removed by :meth:`Hosts.close`, also after a failure; traffic goes
only to the addresses made here.

MPI traffic: the mpich wheel's default transport (UCX) sees that the "hosts" share one kernel and moves
rank messages through shared memory, not the network; :data:`TRANSPORT` makes it use TCP, as it must
between real machines (docs/across-machines.md).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Sequence

#: the environment that sends MPI rank traffic over TCP (UCX's own transports, shared memory off)
TRANSPORT = {"UCX_TLS": "tcp,self"}


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check, timeout=30)


def why_not() -> str | None:
    """Why test hosts cannot be made here (None if they can)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None or shutil.which("unshare") is None:
        return "needs iproute2's ip and util-linux's unshare"
    probe = f"dlbkprobe{os.getpid()}"
    done = _ip("netns", "add", probe, check=False)
    if done.returncode != 0:
        return f"ip netns add failed: {done.stderr.strip()}"
    _ip("netns", "del", probe, check=False)
    return None


class Hosts:
    """*n* hosts ``10.231.X.1`` .. ``10.231.X.n`` (X from this process's id and *index*), namespaces
    ``dlbk<pid><index>h<i>``; *private*: the indexes (0-based) of hosts whose view of *status_dir* is their own
    empty directory; *slow*: {index: seconds} hosts whose link delays every frame that long each way
    (a user-space relay, tests/support/relay.py, in a namespace of its own between the host and the
    bridge: this kernel has no ``netem``)."""

    def __init__(self, folder: Path, n: int = 3, *, private: Sequence[int] = (), status_dir: Path | None = None,
                 slow: dict[int, float] | None = None, index: int = 0):
        tag = f"dlbk{os.getpid() % 1_000_000}{index}"  # *index*: another set of hosts beside this one
        net = 20 + (os.getpid() + 97 * index) % 200
        self.names = [f"{tag}h{i + 1}" for i in range(n)]
        self.addresses = [f"10.231.{net}.{i + 1}" for i in range(n)]
        self.links = [f"{tag}v{i + 1}" for i in range(n)]  # each host's link, on the bridge's side
        self.unreachable = f"10.231.{net}.250"  # no host: the stand-in hangs as ssh would
        self.bridge = f"{tag}b"
        self.folder = Path(folder)
        self.launcher = self.folder / "ssh-to-namespace"
        self._made: list[str] = []
        self.slow = dict(slow or {})
        self.wires = {i: f"{tag}w{i + 1}" for i in self.slow}  # the relays' namespaces
        self.names_all = self.names + list(self.wires.values())
        try:
            _ip("link", "add", self.bridge, "type", "bridge")
            self._made.append("bridge")
            _ip("link", "set", self.bridge, "up")
            for i, (name, address, link) in enumerate(zip(self.names, self.addresses, self.links)):
                _ip("netns", "add", name)
                self._made.append(name)
                if i in self.slow:  # host eth0 ~ wa [relay] wb ~ link on the bridge
                    wire = self.wires[i]
                    _ip("netns", "add", wire)
                    self._made.append(wire)
                    _ip("-n", wire, "link", "add", "wa", "type", "veth", "peer", "name", "eth0", "netns", name)
                    _ip("link", "add", link, "type", "veth", "peer", "name", "wb", "netns", wire)
                    for end in ("wa", "wb"):
                        _ip("-n", wire, "link", "set", end, "promisc", "on", "up")
                else:
                    _ip("link", "add", link, "type", "veth", "peer", "name", "eth0", "netns", name)
                _ip("link", "set", link, "master", self.bridge)
                _ip("link", "set", link, "up")
                _ip("-n", name, "addr", "add", f"{address}/24", "dev", "eth0")
                _ip("-n", name, "link", "set", "eth0", "up")
                _ip("-n", name, "link", "set", "lo", "up")
            self._write_launcher(set(private), status_dir)
            if self.slow:
                self._start_relays()
        except BaseException:
            self.close()
            raise

    def _start_relays(self) -> None:
        """Offloads off on every host (a relay forwards frames of at most the MTU), then one relay per
        slow link, each started before this returns."""
        import sys

        here = Path(__file__).parent
        off = f"import sys; sys.path.insert(0, {str(here)!r}); from relay import no_offloads; no_offloads('eth0')"
        for name in self.names:
            subprocess.run(["ip", "netns", "exec", name, sys.executable, "-c", off], check=True, timeout=30)
        for i, delay in self.slow.items():
            relay = subprocess.Popen(["ip", "netns", "exec", self.wires[i], sys.executable, str(here / "relay.py"),
                                      "wa", "wb", str(delay)], stdout=subprocess.PIPE, text=True)
            assert relay.stdout.readline().strip() == "relaying", "the relay did not start"

    def _write_launcher(self, private: set[int], status_dir: Path | None) -> None:
        cases = []
        for i, (name, address) in enumerate(zip(self.names, self.addresses)):
            if i in private:
                assert status_dir is not None, "a private status directory needs status_dir"
                run = (f'exec ip netns exec {name} unshare -m sh -c '
                       f'\'mount -t tmpfs dlbk-private "{status_dir}" && exec sh -c "$1"\' sh "$*"')
            else:
                run = f'exec ip netns exec {name} sh -c "$*"'
            cases.append(f"  {address}) {run} ;;")
        # an address that answers nothing: ssh to a host that is down waits for its TCP timeout (minutes);
        # the wait is in the first host's namespace, so close() ends it
        cases.append(f"  {self.unreachable}) exec ip netns exec {self.names[0]} sleep 3600 ;;")
        self.launcher.write_text("#!/bin/sh\n"
                                 "# ssh [-x] HOST CMD...: CMD in HOST's network namespace (tests/support/netns.py)\n"
                                 '[ "$1" = "-x" ] && shift\n'
                                 'host=$1; shift\n'
                                 'case $host in\n' + "\n".join(cases) + "\n"
                                 '  *) echo "ssh: Could not resolve hostname $host: Name or service not known" >&2; '
                                 'exit 255 ;;\n'
                                 'esac\n')
        self.launcher.chmod(0o755)

    def env(self, base: dict | None = None, **extra: str) -> dict:
        """An environment in which ``mpiexec -hosts`` reaches these hosts through the stand-in, and
        MPI's traffic goes over TCP."""
        env = dict(os.environ if base is None else base)
        env.update(HYDRA_LAUNCHER="ssh", HYDRA_LAUNCHER_EXEC=str(self.launcher), **TRANSPORT)
        env.update(extra)
        for k in ("PMI_RANK", "PMI_SIZE", "PMI_FD", "PMI_PORT"):
            env.pop(k, None)
        return env

    def spec(self, slots: Sequence[int]) -> str:
        """``--hosts`` for *slots* ranks on each host in turn: ``10.231.X.1:2,10.231.X.2:1``."""
        return ",".join(f"{a}:{k}" for a, k in zip(self.addresses, slots) if k)

    def run(self, argv: Sequence[str], *, on: int = 0, timeout: float, env: dict | None = None,
            cwd=None) -> subprocess.CompletedProcess:
        """*argv* started on host *on* (its namespace), output captured as text; a hang past *timeout*
        fails the test, with what it wrote."""
        cmd = ["ip", "netns", "exec", self.names[on], *map(str, argv)]
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env or self.env(),
                                  cwd=cwd)
        except subprocess.TimeoutExpired as e:
            import pytest
            err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
            pytest.fail(f"{' '.join(map(str, argv))} on {self.names[on]} did not end within {timeout} s; "
                        f"stderr:\n{err[-3000:]}")

    def traffic(self, i: int) -> int:
        """Bytes that crossed host *i*'s link so far, both ways."""
        stats = Path("/sys/class/net") / self.links[i] / "statistics"
        return int((stats / "rx_bytes").read_text()) + int((stats / "tx_bytes").read_text())

    def pids(self) -> list[int]:
        """The processes running in the hosts' namespaces."""
        out = []
        for name in self.names_all:
            if name in self._made:
                done = _ip("netns", "pids", name, check=False)
                out += [int(p) for p in done.stdout.split()]
        return out

    def close(self) -> None:
        """Kill every process in the namespaces, then remove them and the bridge."""
        import signal
        import time

        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        deadline = time.monotonic() + 10
        while self.pids() and time.monotonic() < deadline:
            time.sleep(0.05)
        for name in self.names_all:
            if name in self._made:
                _ip("netns", "del", name, check=False)  # its end of the veth goes with it, and so the pair
        if "bridge" in self._made:
            _ip("link", "del", self.bridge, check=False)
        self._made.clear()

    def __enter__(self) -> "Hosts":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
