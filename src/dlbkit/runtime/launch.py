"""``dlbkit run ... --backend mpi --ranks N``: dlbkit starts the MPI job itself, so a dead rank is named.

Under MPI a rank that dies (killed, segfault, out of memory) ends the whole job: MPICH's Hydra kills
every other rank at once with SIGKILL and prints its ``BAD TERMINATION`` banner, which names one
PID and its exit code (not always the rank that died first). No rank survives to say more. When dlbkit starts ``mpiexec``
itself, it can: :func:`launch` creates a status directory, starts
``mpiexec -n N <python> -m dlbkit run <the same arguments>`` with :data:`~dlbkit.runtime.status.ENV`
naming it (each rank then keeps a tiny file saying what it is doing: :mod:`dlbkit.runtime.status`),
forwards the job's output as it comes, waits, and when ``mpiexec`` fails with a rank unfinished,
prints one last line on stderr::

    dlbkit: rank 2 (pid 4711 on node7) died while computing items 40–59

The exit status is ``mpiexec``'s own (9 when the rank was killed by SIGKILL; 128 + the signal if
``mpiexec`` itself was killed), never 0 after a failure.

Which rank died first. By the time ``mpiexec`` exits every rank is dead: the one that died and the
ones Hydra killed because of it, all by SIGKILL and all with a status file saying "not done". Neither
the files nor Hydra's banner tell them apart: a file is written when a unit of work *starts*, not
when the process ends, and the banner names whichever exit Hydra handled first (measured here: a rank
2 that killed itself, and the banner named rank 1's PID). So the launcher watches the ranks while the
job runs. Each rank keeps open the write end of a FIFO, ``alive-R``, that the launcher made and
reads: the kernel closes it when the process's descriptors go, in the same step that closes the
sockets by which Hydra learns of the death, so its hang-up comes before Hydra's chain of wake-ups
(its proxy notices, tells ``mpiexec``, which tells every proxy to kill) can end any other rank. As a
second sign, as each rank's file appears the launcher opens a ``pidfd`` on its PID (Linux 5.3+, the
same host); a pidfd is readable only once the whole process has gone, which on a loaded machine
came after a rank Hydra killed had gone (the wrong rank named, twice in some twenty suites). The
first rank seen ending whose file does not say "done" is the one named. When two ranks are seen
ending in the same poll, or a rank whose file had not been listed yet is found already gone when a
watched one ends (the launcher woke late), the line lists them all with their states. Where that
cannot be watched (no FIFO or pidfd), a single unfinished rank is named, or the unfinished ranks are
listed with their states.

Across machines (``--hosts h1:2,h2:2`` or ``--hostfile FILE``, passed to Hydra as ``-hosts`` and
``-f``). A rank on another machine cannot use the launcher's FIFOs and may not see its status directory
(a private ``/tmp``): it sends its records over a TCP connection to the launcher instead
(:data:`~dlbkit.runtime.status.ADDR_ENV`: the launcher's address towards each host, with a token the
launcher checks), and the connection's close is that rank's end, as the FIFO's hang-up is for a rank of
this machine. So a dead rank is named whether or not the machines share the directory. The launcher
also bounds the start: every rank says who it is as soon as its ``dlbkit`` command has read its
arguments (its status file, or its connection); if some have not within *start_timeout* seconds (a host
that does not answer, a different path to Python there), the job is ended and one line names the ranks
that did not start, with exit status 1. When ``mpiexec`` gives up by itself first (ssh refused), the
same line names them, with ``mpiexec``'s status.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Sequence

from dlbkit.runtime import status

__all__ = ["MAX_RANKS", "START_S", "NOT_STARTED", "find_mpiexec", "without_ranks", "launch", "diagnose",
           "read_hostfile", "parse_hosts", "local_addresses"]

#: the most ranks ``--ranks`` starts (a sanity bound, like the local backend's worker bound: start
#: ``mpiexec`` yourself for a bigger job)
MAX_RANKS = 1024
#: seconds every rank has to say it started (``--start-timeout``): Python and dlbkit start in well under
#: 10 s on a loaded machine; a host that cannot be reached would hold ssh for its TCP timeout (minutes)
START_S = 60.0
#: the exit status when some ranks did not start within the bound (the job was ended by the launcher)
NOT_STARTED = 1


def find_mpiexec() -> str | None:
    """The ``mpiexec`` next to this Python (the ``mpich`` wheel installs it in the environment's bin),
    else the first on ``PATH``, else None."""
    here = Path(sys.executable).parent / "mpiexec"
    if here.exists():
        return str(here)
    return shutil.which("mpiexec")


#: the launcher's own options, which the job's command must not see again (each takes a value)
LAUNCH_OPTIONS = ("--ranks", "--hosts", "--hostfile", "--start-timeout")


def without_ranks(argv: Sequence[str]) -> list[str]:
    """*argv* without the launcher's options (:data:`LAUNCH_OPTIONS`: ``--ranks N``, ``--ranks=N``, or
    an abbreviation argparse accepts that names one of them alone: ``--ra``…)."""
    out: list[str] = []
    skip = False
    for a in argv:
        if skip:
            skip = False
            continue
        name = a.split("=", 1)[0]
        if name.startswith("--") and len(name) >= 4 and any(o.startswith(name) for o in LAUNCH_OPTIONS):
            skip = "=" not in a
            continue
        out.append(a)
    return out


def parse_hosts(text: str, field: str = "--hosts") -> list[tuple[str, int | None]]:
    """``h1:2,h2:2,h3`` as [(host, slots or None)], in Hydra's ``-hosts`` syntax; a ConfigError naming
    *field* for a bad entry."""
    from dlbkit.errors import ConfigError

    out = []
    for entry in text.split(","):
        host, sep, slots = entry.strip().partition(":")
        if not host or any(c.isspace() for c in host):
            raise ConfigError(field, text, "host names or addresses with optional slot counts, comma-separated: "
                              "h1:2,h2:2")
        if sep and not (slots.isdigit() and int(slots) >= 1):
            raise ConfigError(field, entry, "HOST or HOST:SLOTS with SLOTS an integer >= 1")
        out.append((host, int(slots) if sep else None))
    return out


def read_hostfile(path: str) -> list[tuple[str, int | None]]:
    """A Hydra host file (one ``HOST`` or ``HOST:SLOTS`` per line, ``#`` comments) as [(host, slots)]."""
    from dlbkit.errors import ConfigError

    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError("--hostfile", path, f"a readable text file of hosts ({type(e).__name__}: "
                          f"{getattr(e, 'strerror', None) or e})") from None
    hosts = []
    for n, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].strip()
        if line:
            hosts += parse_hosts(line.split()[0], f"--hostfile {path} line {n}")
    if not hosts:
        raise ConfigError("--hostfile", path, "a file naming at least one host")
    return hosts


def local_addresses(hosts: Sequence[str]) -> list[str]:
    """This machine's address towards each host (the source address its routes choose; a UDP
    ``connect`` sends nothing), without repeats; a ConfigError for a host that does not resolve."""
    from dlbkit.errors import ConfigError

    out: list[str] = []
    for host in hosts:
        try:
            info = socket.getaddrinfo(host, 9, socket.AF_INET, socket.SOCK_DGRAM)
        except (OSError, UnicodeError):
            raise ConfigError("--hosts", host, "a host name this machine resolves, or an IPv4 address") from None
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                s.connect(info[0][4])
                mine = s.getsockname()[0]
            except OSError:
                raise ConfigError("--hosts", host, "a host this machine has a route to") from None
        if mine not in out:
            out.append(mine)
    return out


class _Forward(threading.Thread):
    """Copy one pipe of the job to our own stream as it comes (bytes, partial lines included)."""

    def __init__(self, pipe, stream):
        super().__init__(daemon=True)
        self.pipe, self.stream = pipe, stream

    def run(self) -> None:
        out = getattr(self.stream, "buffer", None)
        fd = self.pipe.fileno()
        while True:
            data = os.read(fd, 65536)
            if not data:
                break
            try:
                if out is not None:
                    out.write(data)
                else:
                    self.stream.write(data.decode(errors="replace"))
                self.stream.flush()
            except (OSError, ValueError):  # our own stream is closed: keep draining the job
                pass
        self.pipe.close()


def _tie_to_us() -> None:
    """In the child before exec: on Linux, get SIGTERM when the launcher dies (Hydra then ends the
    ranks), so a launcher killed outright leaves no job behind."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


class _Watch:
    """Which rank ended first without finishing its run: pidfds on the ranks' PIDs as their status
    files appear, the FIFOs of this machine's ranks and the connections of the others', polled together
    with the job's own pidfd; and whether every rank started within the bound."""

    POLL_S = 0.005  # how often the status directory is listed until every rank has written its file

    def __init__(self, folder: str, ranks: int, job_pid: int, *, listener: socket.socket | None = None,
                 token: str = "", start_timeout: float = START_S, on_late=None, fifos: dict[int, int] | None = None):
        import select

        self.folder, self.ranks = folder, ranks
        self.host = socket.gethostname()
        self.fds: dict[int, int] = {}  # pidfd or FIFO -> rank
        self.seen: set[int] = set()  # ranks that said they started (a status file or a connection)
        self.first: list[tuple[int, dict]] | None = None  # [(rank, record)] of the first unfinished exit
        #: the ranks that had not started when the bound passed (the job was then ended: *on_late*)
        self.not_started: list[int] | None = None
        self.remote: dict[int, dict] = {}  # rank -> last record received over its connection
        self.listener, self.token, self.on_late = listener, token, on_late
        self.conns: dict[int, list] = {}  # fd -> [socket, bytes not yet a line, rank or None]
        self.deadline = time.monotonic() + start_timeout
        self.poller = select.poll()
        self.job_fd = os.pidfd_open(job_pid)
        self.poller.register(self.job_fd, select.POLLIN)
        if listener is not None:
            self.poller.register(listener.fileno(), select.POLLIN)
        # each rank keeps the write end of its FIFO open (status.open_for) and the kernel closes it when
        # the process's descriptors go, in the same step that closes the sockets by which Hydra learns of
        # a death: the killer's hang-up is seen before Hydra can kill anyone. A pidfd is ready only once
        # the whole process has gone, and on a loaded machine a rank Hydra killed was seen ending before
        # the rank that died (rank 2 named, rank 1 had killed itself: twice in some twenty suites)
        for fd, r in (_fifos(folder, ranks) if fifos is None else fifos).items():
            self.fds[fd] = r
            self.poller.register(fd, select.POLLIN)

    def run(self) -> None:
        """Until the job ends."""
        try:
            while True:
                if len(self.seen) < self.ranks:
                    gone = self._discover()
                    if gone and self.first is None:
                        self.first = gone
                    if len(self.seen) < self.ranks and self.not_started is None \
                            and time.monotonic() > self.deadline:
                        self.not_started = sorted(set(range(self.ranks)) - self.seen)
                        if self.on_late is not None:
                            self.on_late()
                waiting = len(self.seen) < self.ranks and self.not_started is None
                ready = {fd for fd, _ in self.poller.poll(self.POLL_S * 1000 if waiting else None)}
                ended = sorted({self.fds[fd] for fd in ready if fd in self.fds})  # a FIFO and a pidfd: one rank
                ended_remote = self._serve(ready)
                if ended or ended_remote:
                    for fd in [fd for fd in ready if fd in self.fds]:
                        self.poller.unregister(fd)
                    # a rank whose file appeared since the last listing may already be gone: on a
                    # loaded machine the launcher can wake only after it died and Hydra's kills
                    # reached the ranks it watches, so it is a candidate beside them, not later
                    n_watched = len(self.fds)
                    gone = self._discover() if len(self.seen) < self.ranks else []
                    if len(self.fds) > n_watched:
                        # a rank just found may have died before the one that woke us (a zombie's pidfd
                        # opens, and is ready at once): without this, the rank Hydra killed because of
                        # it was named alone (rank 1 named, rank 2 had died, once on a loaded machine)
                        late = [fd for fd, _ in self.poller.poll(0) if fd in self.fds]
                        for fd in late:
                            self.poller.unregister(fd)
                        ended = sorted({*ended, *(self.fds[fd] for fd in late)})
                    records = {**status.read(self.folder), **self.remote}
                    dead = [(r, records[r]) for r in sorted({*ended, *ended_remote})
                            if r in records and records[r].get("state") != status.DONE]
                    if (dead or gone) and self.first is None:
                        self.first = sorted(dead + gone, key=lambda d: d[0])
                if self.job_fd in ready:
                    return
        finally:
            for fd in [self.job_fd, *self.fds]:
                os.close(fd)
            for sock, _, _ in self.conns.values():
                sock.close()

    def _serve(self, ready: set[int]) -> list[int]:
        """Accept the ranks' connections and read their records; return the ranks whose connection
        closed (they ended)."""
        import select

        if self.listener is not None and self.listener.fileno() in ready:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                sock = None
            if sock is not None:
                self.conns[sock.fileno()] = [sock, b"", None]
                self.poller.register(sock.fileno(), select.POLLIN)
        ended = []
        for fd in [fd for fd in ready if fd in self.conns]:
            conn = self.conns[fd]
            try:
                data = conn[0].recv(65536)
            except OSError:
                data = b""
            *lines, conn[1] = (conn[1] + data).split(b"\n")
            if len(conn[1]) > 4 * status.RECORD_BYTES:  # no record is this long: not one of our ranks
                data, lines = b"", []
            for line in lines:
                rec = status.parse_line(line)
                if rec is None:
                    continue
                if conn[2] is None:  # the first line: who this is, and the token that shows it is ours
                    if rec.pop("token", None) != self.token or not 0 <= int(rec["rank"]) < self.ranks:
                        data = b""  # not one of this job's ranks: dropped
                        break
                    conn[2] = int(rec["rank"])
                    self.seen.add(conn[2])
                    rec["state"] = "starting"
                self.remote[conn[2]] = rec
            if not data:
                self.poller.unregister(fd)
                conn[0].close()
                del self.conns[fd]
                if conn[2] is not None:
                    ended.append(conn[2])
        return ended

    def _discover(self) -> list[tuple[int, dict]]:
        """Watch the ranks whose files appeared; return those already gone without finishing."""
        import select

        gone = []
        for r, rec in sorted(status.read(self.folder).items()):
            if r in self.seen:
                continue
            self.seen.add(r)
            if rec.get("host") != self.host:
                continue
            try:
                fd = os.pidfd_open(int(rec["pid"]))
            except OSError:  # it ended before we saw its file: it ended first if nothing else did yet
                if rec.get("state") != status.DONE:
                    gone.append((r, rec))
                continue
            self.fds[fd] = r
            self.poller.register(fd, select.POLLIN)
        return gone


def _fifos(folder: str, ranks: int) -> dict[int, int]:
    """The ranks' ``alive-R`` FIFOs made in *folder* and opened for reading: fd -> rank. Made before
    the job starts, so that no rank of this machine looks for its FIFO before it exists (it would
    take a connection instead)."""
    out = {}
    for r in range(ranks):
        path = os.path.join(folder, f"alive-{r}")
        try:
            os.mkfifo(path)
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # no hang-up until a writer came and went
        except OSError:  # no FIFOs here: the pidfds alone
            continue
        out[fd] = r
    return out


def _alive(pid: int, host: str | None) -> bool:
    """Whether process *pid* (of *host*) still runs: one that ended and was not reaped yet (a zombie: its
    parent, Hydra's proxy, not yet waited for it) has not."""
    import socket

    if host is not None and host != socket.gethostname():
        return False  # another machine's process: mpiexec has ended, so has it
    try:
        os.kill(pid, 0)  # a zombie answers this as a live process does
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # Linux: the state in /proc/PID/stat, after the command's closing parenthesis
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):  # not Linux, or it ended just now
        return os.path.exists(f"/proc/{pid}") or not os.path.isdir("/proc")
    return state not in (b"Z", b"X")


def diagnose(records: dict[int, dict], first: list[tuple[int, dict]] | None, code: int) -> str | None:
    """The one line after a failed job, or None when every rank finished its run (the failure was
    reported by the ranks themselves: an exception of the user's function, bad input). *first*: the
    ranks seen ending first without finishing (:class:`_Watch`), or None if none was seen."""
    if first is not None and len(first) == 1:
        return _died(*first[0])
    unfinished = {r: rec for r, rec in records.items()
                  if rec.get("state") != status.DONE and not _alive(int(rec["pid"]), rec.get("host"))}
    if first:  # several ended in the same instant: those are the candidates
        unfinished = {r: rec for r, rec in first}
    if not unfinished:
        return None
    if len(unfinished) == 1:
        return _died(*next(iter(unfinished.items())))
    each = "; ".join(f"rank {r} (pid {rec['pid']} on {rec.get('host', '?')}) was {rec['state']}"
                     for r, rec in sorted(unfinished.items()))
    return f"dlbkit: a rank died (mpiexec exit status {code}), which one is unknown: {each}"


def _died(r: int, rec: dict) -> str:
    return f"dlbkit: rank {r} (pid {rec['pid']} on {rec.get('host', '?')}) died while {rec['state']}"


def launch(mpiexec: str, ranks: int, argv: Sequence[str], *, hosts: str | None = None,
           hostfile: str | None = None, start_timeout: float = START_S) -> int:
    """Run ``dlbkit <argv>`` as an MPI job of *ranks* ranks, on the machines of *hosts* (Hydra's
    ``-hosts h1:2,h2:2``) or *hostfile* (``-f``) if given; its exit status (with the one line naming a
    dead rank on stderr when it died, or the ranks that did not start within *start_timeout* s)."""
    env = dict(os.environ)
    named = [h for h, _ in (parse_hosts(hosts) if hosts else read_hostfile(hostfile) if hostfile else
                            read_hostfile(env["HYDRA_HOST_FILE"]) if env.get("HYDRA_HOST_FILE") else [])]
    addresses = local_addresses(named) if named else ["127.0.0.1"]  # a host that does not resolve: refused
    token = secrets.token_hex(16)
    # ranks of other machines connect here (status.ADDR_ENV); only this job's, which know the token, count
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    folder = None
    old: dict[int, object] = {}
    try:
        listener.bind(("127.0.0.1" if addresses == ["127.0.0.1"] else "0.0.0.0", 0))
        listener.listen(min(ranks, socket.SOMAXCONN))
        port = listener.getsockname()[1]
        env[status.ADDR_ENV] = token + "@" + ",".join(f"{a}:{port}" for a in addresses)
        folder = tempfile.mkdtemp(prefix="dlbkit-status-", dir=os.environ.get(status.ENV) or None)
        env[status.ENV] = folder
        where = ["-hosts", hosts] if hosts else ["-f", hostfile] if hostfile else []
        cmd = [mpiexec, *where, "-n", str(ranks), sys.executable, "-m", "dlbkit", *argv]
        fifos = _fifos(folder, ranks) if hasattr(os, "pidfd_open") else {}
        job = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=env, start_new_session=True, preexec_fn=_tie_to_us)
        # the job has its own session: Ctrl-C and SIGTERM reach it once, through us
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                old[sig] = signal.signal(sig, lambda s, f: job.send_signal(s))
        out = _Forward(job.stdout, sys.stdout)
        err = _Forward(job.stderr, sys.stderr)
        out.start()
        err.start()
        watch = None
        if hasattr(os, "pidfd_open"):
            try:
                watch = _Watch(folder, ranks, job.pid, listener=listener, token=token,
                               start_timeout=start_timeout, on_late=lambda: _end(job), fifos=fifos)
            except OSError:  # a kernel without pidfds: the final reading of the files only
                watch = None
                for fd in fifos:
                    os.close(fd)
        if watch is not None:
            watch.run()
        code = job.wait()
        out.join()
        err.join()
        if watch is not None and watch.not_started:
            print(_late(watch.not_started, start_timeout, hosts, hostfile), file=sys.stderr, flush=True)
            return NOT_STARTED
        if code == 0:
            return 0
        code = code if code > 0 else 128 - code
        records = {**status.read(folder), **(watch.remote if watch else {})}
        line = diagnose(records, watch.first if watch else None, code)
        if watch is not None:
            watch.seen |= set(records)  # a rank's file written after the watch's last listing
        if line is None and watch is not None and len(watch.seen) < ranks:
            # Hydra gave up before some ranks started (ssh refused, a host unknown to ssh): say which
            line = _late(sorted(set(range(ranks)) - watch.seen), None, hosts, hostfile, code)
        if line is not None:
            print(line, file=sys.stderr, flush=True)
        return code
    finally:
        listener.close()
        for sig, handler in old.items():
            signal.signal(sig, handler)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def _end(job: subprocess.Popen) -> None:
    """End the job: SIGTERM to its session and to every process it started (a launcher's ``ssh``
    still waiting on a host may have a group of its own), SIGKILL to those left 2 s later."""
    tree = _descendants(job.pid)

    def kill(sig):
        try:
            os.killpg(job.pid, sig)
        except OSError:
            pass
        for pid in tree:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
    kill(signal.SIGTERM)
    later = threading.Timer(2.0, lambda: kill(signal.SIGKILL))
    later.daemon = True
    later.start()


def _descendants(pid: int) -> list[int]:
    """The processes below *pid* (Linux ``/proc``; elsewhere none: the session's signal alone)."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(name))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), ()):
            out.append(c)
            todo.append(c)
    return out


def _late(missing: list[int], timeout: float | None, hosts: str | None, hostfile: str | None,
          code: int | None = None) -> str:
    """The line for ranks that did not start within the bound (*timeout*), or before ``mpiexec`` gave up
    (its exit status *code*)."""
    which = ", ".join(map(str, missing[:20])) + (", ..." if len(missing) > 20 else "")
    on = f" of --hosts {hosts}" if hosts else f" of --hostfile {hostfile}" if hostfile else ""
    how = (f"did not start within {timeout:g} s, so the job was ended" if timeout is not None else
           f"did not start (mpiexec exit status {code})")
    return (f"dlbkit: rank{'s' if len(missing) > 1 else ''} {which} {how}: check that every host{on} is "
            "reachable from here without a password "
            "(ssh HOST true), and that this Python and dlbkit are at the same path there "
            f"({sys.executable}); docs/across-machines.md")
