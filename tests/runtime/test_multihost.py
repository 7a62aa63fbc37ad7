"""Across machines: MPI jobs whose ranks run on three test hosts (network namespaces joined by a bridge,
each with its own address: tests/support/netns.py), started by Hydra over an ``ssh`` stand-in or over
OpenSSH (an ``sshd`` on each host; skipped, saying so, without one), as ``dlbkit run``/``cluster``/
``simulate --ranks N --hosts ...`` and a user's own ``mpiexec -hosts`` start them on real machines
(docs/across-machines.md).

Checked: the ranks sit on the hosts ``--hosts`` names and their messages cross the hosts' links (the
bytes on each link); ``map``, ``tree``, ``spmd``, ``graph`` and ``Cluster`` give the serial results; an
MPI sweep's summary is byte-identical to a local one; a rank that dies on another host is named by the
launcher whether that host shares the status directory or not; a host that cannot be reached ends the
job within ``--start-timeout`` (and one that refuses, at once) with a line naming the ranks that did not
start; one host behind a link
20 ms slower each way (a user-space relay: this kernel has no ``netem``) is measured as one slow link,
kept in the recording, replayed as one, and ``advise`` and ``auto`` choose differently than when every
host is near.

Root and ``ip netns`` are needed (else every test is skipped with the reason). Marked ``alone`` (run
one at a time after the others: ranks over TCP on a 2-core machine are slow enough without a
neighbour) and ``full``.
"""

from __future__ import annotations

import json
import re
import sys
import textwrap

import pytest

from support.netns import Hosts, why_not

pytestmark = [pytest.mark.multihost, pytest.mark.full, pytest.mark.alone]

pytest.importorskip("mpi4py", reason="the MPI backend needs mpi4py (pip install 'dlbkit[mpi]')")

TIMEOUT = 180  # seconds for one job: a few seconds each here, far more on a loaded machine
SLOTS = (2, 1, 1)  # ranks on each host: rank 0 (the coordinator) and rank 1 on host 1, one on each other

WORK = textwrap.dedent("""
    import os, signal, socket, time

    def cost(i):
        x = 0
        for _ in range((1 + i % 4) * 300):
            x += 1
        return x + i

    def _here():
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.connect((os.environ["DIES_ON"], 9))  # sends nothing: the source address is this host's
        return s.getsockname()[0]

    def nap(i):
        time.sleep(0.002)
        return i

    def dies_far(i):
        time.sleep(0.002)
        if i >= 60 and _here() == os.environ["DIES_ON"]:
            os.kill(os.getpid(), signal.SIGKILL)
        return i
""")

FAMILIES = textwrap.dedent("""
    import json, socket, sys
    import numpy as np
    from mpi4py import MPI
    import dlbkit

    def square(x):
        return x * x

    def add(a, b):
        return a + b

    def expand(n):
        return ([n + 1, n + 1] if n < 5 else []), 1

    def smooth(u):
        return 0.25 * u[:-2] + 0.5 * u[1:-1] + 0.25 * u[2:]

    if __name__ == "__main__":
        comm = MPI.COMM_WORLD
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.connect((sys.argv[1], 9))
        where = comm.gather(s.getsockname()[0], root=0)
        out = {"where": where}
        out["map"] = dlbkit.map(square, range(300), balancer="fac2", backend="mpi", progress=False)
        out["tree"] = dlbkit.run_tree(expand, 0, backend="mpi", progress=False).value
        out["spmd"] = dlbkit.run_spmd(smooth, np.arange(40.0), iterations=5, backend="mpi",
                                      progress=False).domain.tolist()
        out["graph"] = dlbkit.graph({"a": (square, 2), "b": (square, 3), "c": (add, "a", "b")}, backend="mpi",
                                    progress=False)
        # 8 MB from rank 0 to every rank: what the links must carry at least, if the ranks use them
        a = np.ones(1_000_000) if comm.rank == 0 else np.empty(1_000_000)
        comm.Bcast(a, root=0)
        out["bcast"] = float(a.sum())
        if comm.rank == 0:
            with open("partial.json", "w") as f:
                json.dump(out, f)
        try:
            with dlbkit.Cluster(backend="mpi") as c:  # last: its node ranks leave when it closes
                out["cluster"] = [f.result(timeout=60) for f in [c.submit(square, i) for i in range(40)]]
        except SystemExit as e:
            if e.code != 0:
                raise
        if comm.rank == 0:
            with open("out.json", "w") as f:
                json.dump(out, f)
""")


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    reason = why_not()
    if reason:
        pytest.skip(f"no test hosts here: {reason}")
    folder = tmp_path_factory.mktemp("hosts")
    private = folder / "private-status"  # host 3 sees its own empty directory here
    private.mkdir()
    with Hosts(folder, 3, private=[2], status_dir=private) as h:
        h.private = private
        yield h
    assert h.pids() == [] and not any(n in _netns() for n in h.names), "a namespace or process was left"


def _netns() -> str:
    import subprocess
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


def _dlbkit(hosts, cwd, *argv, env=None):
    return hosts.run([sys.executable, "-m", "dlbkit", *argv], timeout=TIMEOUT, cwd=cwd, env=env)


def test_every_family_runs_across_the_hosts_over_their_links(hosts, tmp_path):
    import numpy as np

    import dlbkit

    (tmp_path / "job.py").write_text(FAMILIES)
    before = [hosts.traffic(i) for i in range(3)]
    from support.mpi import mpiexec
    p = hosts.run([mpiexec(), "-hosts", hosts.spec(SLOTS), "-n", "4", sys.executable, "job.py",
                   hosts.addresses[0]], timeout=TIMEOUT, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads((tmp_path / "out.json").read_text())
    a = hosts.addresses
    assert out["where"] == [a[0], a[0], a[1], a[2]]  # Hydra fills the hosts in order
    assert out["map"] == [x * x for x in range(300)]
    assert out["tree"] == 63  # 1 + 2 + ... + 32 nodes of value 1
    serial = np.arange(40.0)
    local = dlbkit.run_spmd(lambda u: 0.25 * u[:-2] + 0.5 * u[1:-1] + 0.25 * u[2:], serial, iterations=5,
                            backend="local", workers=1, progress=False).domain
    assert out["spmd"] == local.tolist()
    assert out["graph"] == {"a": 4, "b": 9, "c": 13}
    assert out["bcast"] == 1_000_000.0
    assert out["cluster"] == [i * i for i in range(40)]
    crossed = [hosts.traffic(i) - b for i, b in zip(range(3), before)]
    # host 2's and host 3's ranks each received 8 MB of the broadcast: over their own link, not memory
    assert crossed[1] >= 8_000_000 and crossed[2] >= 8_000_000, crossed


@pytest.fixture
def work(tmp_path, monkeypatch):
    (tmp_path / "farwork.py").write_text(WORK)
    return tmp_path


def test_dlbkit_run_with_hosts_gives_the_serial_results(hosts, work):
    p = _dlbkit(hosts, work, "run", "farwork:cost", "--items", "300", "-b", "gss", "--backend", "mpi",
                "--ranks", "4", "--hosts", hosts.spec(SLOTS), "--results", "far.json", "--json")
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stderr == ""
    import importlib.util
    spec = importlib.util.spec_from_file_location("farwork", work / "farwork.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert json.loads((work / "far.json").read_text()) == [mod.cost(i) for i in range(300)]
    assert json.loads(p.stdout)["items"] == 300


def test_dlbkit_cluster_with_hosts_runs_every_job_once_on_the_far_nodes(hosts, work):
    p = _dlbkit(hosts, work, "cluster", "farwork:cost", "--jobs", "60", "--backend", "mpi", "--ranks", "4",
                "--hosts", hosts.spec(SLOTS), "--json", "--no-progress")
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout)
    assert (out["workers"], out["failed"], sum(out["jobs_per_node"])) == (3, 0, 60)
    assert all(n > 0 for n in out["jobs_per_node"]), out  # the nodes on hosts 2 and 3 ran jobs too


def test_a_hostfile_is_the_same_as_hosts(hosts, work):
    (work / "hosts.txt").write_text("# test hosts\n" + "\n".join(hosts.spec(SLOTS).split(",")) + "\n")
    p = _dlbkit(hosts, work, "run", "farwork:cost", "--items", "100", "--backend", "mpi", "--ranks", "4",
                "--hostfile", "hosts.txt", "--results", "far.json")
    assert p.returncode == 0, p.stderr[-3000:]
    assert len(json.loads((work / "far.json").read_text())) == 100


def test_an_mpi_sweep_across_the_hosts_equals_a_local_one(hosts, tmp_path):
    local = _dlbkit(hosts, tmp_path, "simulate", "demo", "--jobs", "2", "--out", "local", "--no-progress")
    assert local.returncode == 0, local.stderr[-3000:]
    far = _dlbkit(hosts, tmp_path, "simulate", "demo", "--executor", "mpi", "--ranks", "4", "--hosts",
                  hosts.spec(SLOTS), "--out", "far", "--no-progress")
    assert far.returncode == 0, far.stderr[-3000:]
    assert (tmp_path / "far" / "summary.csv").read_bytes() == (tmp_path / "local" / "summary.csv").read_bytes()


@pytest.mark.parametrize("shared", [True, False], ids=["shared status dir", "private status dir"])
def test_a_rank_that_dies_on_another_host_is_named(hosts, work, shared):
    """Rank 3 (host 3) kills itself at its first item from 60 on. With host 3 seeing the launcher's
    status directory, its file and FIFO tell; with its own (private) directory, its connection does."""
    base = work / "status" if shared else hosts.private
    base.mkdir(exist_ok=True)
    env = hosts.env(DLBKIT_STATUS_DIR=str(base), DIES_ON=hosts.addresses[2])
    p = _dlbkit(hosts, work, "run", "farwork:dies_far", "--items", "400", "-b", "ss", "--backend", "mpi",
                "--ranks", "4", "--hosts", hosts.spec(SLOTS), env=env)
    assert p.returncode != 0
    assert "Traceback" not in p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert re.fullmatch(r"dlbkit: rank 3 \(pid \d+ on \S+\) died while computing item \d+", last), p.stderr[-3000:]
    assert int(last.rsplit(" ", 1)[1]) >= 60
    print(f"shared={shared}: exit status {p.returncode}; {last}")
    assert list(base.glob("dlbkit-status-*")) == []


def test_a_host_that_cannot_be_reached_ends_the_job_within_the_bound(hosts, work):
    spec = f"{hosts.addresses[0]}:2,{hosts.unreachable}:2"
    import time
    t = time.monotonic()
    p = _dlbkit(hosts, work, "run", "farwork:cost", "--items", "50", "--backend", "mpi", "--ranks", "4",
                "--hosts", spec, "--start-timeout", "5")
    took = time.monotonic() - t
    assert p.returncode == 1, p.stderr[-3000:]
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("dlbkit: ranks 2, 3 did not start within 5 s, so the job was ended"), last
    assert spec in last
    assert took < 60, took  # the bound, not ssh's TCP timeout (a generous margin for a loaded machine)


def test_a_host_the_launcher_cannot_log_in_to_is_named_when_mpiexec_gives_up(hosts, work):
    """The stand-in fails at once for an address it does not know, as ssh does for a refused
    connection: Hydra ends with 255 before those ranks start (and often before any: it gives up the
    whole launch), and the last line names the ranks that did not start."""
    unknown = hosts.unreachable.rsplit(".", 1)[0] + ".251"  # no host, and no hang: refused at once
    spec = f"{hosts.addresses[0]}:2,{unknown}:2"
    p = _dlbkit(hosts, work, "run", "farwork:cost", "--items", "50", "--backend", "mpi", "--ranks", "4",
                "--hosts", spec)
    assert p.returncode == 255, p.stderr[-3000:]
    last = p.stderr.strip().splitlines()[-1]
    m = re.fullmatch(r"dlbkit: ranks ([\d, ]+) did not start \(mpiexec exit status 255\): check that every host "
                     rf"of --hosts {re.escape(spec)} is reachable .*", last)
    assert m and {2, 3} <= {int(r) for r in m.group(1).split(", ")}, last


def test_a_host_name_that_does_not_resolve_is_refused_before_the_job(hosts, work):
    p = _dlbkit(hosts, work, "run", "farwork:cost", "--items", "50", "--backend", "mpi", "--ranks", "4",
                "--hosts", "no-such-host.invalid:2,also-not.invalid:2")
    assert p.returncode == 2
    assert p.stderr.strip() == ("dlbkit: error: --hosts must be a host name this machine resolves, or an IPv4 "
                                "address; got 'no-such-host.invalid'")


SLOW_S = 0.02  # seconds the slow link adds each way


@pytest.fixture(scope="module")
def far_hosts(hosts, tmp_path_factory):
    """Three more hosts, the third behind a slow link (needs *hosts*: the same checks, already passed)."""
    with Hosts(tmp_path_factory.mktemp("far-hosts"), 3, slow={2: SLOW_S}, index=1) as h:
        yield h
    assert h.pids() == [] and not any(n in _netns() for n in h.names_all), "a namespace or process was left"


def test_one_slow_link_is_measured_recorded_and_modelled_as_one(hosts, far_hosts, work):
    import dlbkit
    from dlbkit.families.divisible.model.links import round_trip_latency

    runs = {}
    for name, h in (("near", hosts), ("far", far_hosts)):
        p = _dlbkit(h, work, "run", "farwork:nap", "--items", "300", "-b", "ss", "--backend", "mpi", "--ranks", "4",
                    "--hosts", h.spec(SLOTS), "--record", f"{name}.json")
        assert p.returncode == 0, p.stderr[-3000:]
        runs[name] = dlbkit.load_trace(str(work / f"{name}.json"))
    near, far = runs["near"].meta["link_latency"], runs["far"].meta["link_latency"]
    print(f"link latency (ms) near {[round(x * 1e3, 2) for x in near]}, far {[round(x * 1e3, 2) for x in far]}")
    # worker 2 is rank 3, on host 3: each of its requests waits the relay's delay there and back
    assert far[2] >= SLOW_S, far
    assert max(far[:2]) < SLOW_S / 4 and max(near) < SLOW_S / 4, (near, far)
    real = runs["far"].makespan
    replay = dlbkit.replay(runs["far"])
    assert replay.model.links == far  # the replay takes what the recording kept
    pooled = dlbkit.replay(runs["far"], latency=round_trip_latency(runs["far"]))
    err = {"per link": replay.trace.makespan / real - 1, "pooled": pooled.trace.makespan / real - 1}
    print(f"replay of the far run against its real makespan {real:.3f} s: {err}")
    assert abs(err["per link"]) < abs(err["pooled"]), err
    chosen = {name: dlbkit.advise(tr)[0]["balancer"] for name, tr in runs.items()}
    print(f"advise's first choice: {chosen}")
    assert chosen["near"] != chosen["far"], chosen


AUTO_LOOP = textwrap.dedent("""
    import json, time
    from mpi4py import MPI
    import dlbkit

    def nap(i):
        time.sleep(0.002)
        return i

    if __name__ == "__main__":
        # 120 items of 2 ms: 80 ms per worker, so the far worker's 40 ms round trip decides; at 300 items
        # (200 ms each) the candidates' predictions lay within about 12% and auto chose static behind
        # the slow link in 2 of 7 runs
        with dlbkit.Loop(nap, backend="mpi", balancer="auto") as loop:
            for _ in range(2):
                loop.map(range(120))
            tr = loop.trace
        if MPI.COMM_WORLD.rank == 0:
            with open("auto.json", "w") as f:
                json.dump({"next": tr.meta["time_steps"][0]["auto"]["next"],
                           "link_latency": tr.meta["link_latency"]}, f)
""")


def test_auto_in_a_real_loop_chooses_differently_behind_one_slow_link(hosts, far_hosts, tmp_path):
    from support.mpi import mpiexec

    (tmp_path / "loop.py").write_text(AUTO_LOOP)
    chosen = {}
    for name, h in (("near", hosts), ("far", far_hosts)):
        p = h.run([mpiexec(), "-hosts", h.spec(SLOTS), "-n", "4", sys.executable, "loop.py"], timeout=TIMEOUT,
                  cwd=tmp_path)
        assert p.returncode == 0, p.stderr[-3000:]
        got = json.loads((tmp_path / "auto.json").read_text())
        chosen[name] = got["next"]
        assert (got["link_latency"][2] >= SLOW_S) == (name == "far"), got
    print(f"auto's choice after the first step: {chosen}")
    assert chosen["near"] != chosen["far"], chosen


@pytest.fixture(scope="module")
def over_ssh(hosts, tmp_path_factory):
    """OpenSSH between the hosts, as docs/across-machines.md sets it up: an ``sshd`` on each (key login
    only), the client's key in its authorized keys, host keys accepted on first use. The client's files
    are the test's own (``ssh -F``, through ``HYDRA_LAUNCHER_EXEC``), not root's ``~/.ssh``."""
    import os
    import shutil
    import subprocess

    sshd = "/usr/sbin/sshd"
    if not os.path.exists(sshd) or shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        pytest.skip("no OpenSSH server here (apt-get install openssh-server)")
    d = tmp_path_factory.mktemp("ssh")
    for key in ("host", "client"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / key)], check=True, timeout=30)
    (d / "authorized_keys").write_text((d / "client.pub").read_text())
    (d / "config").write_text(f"Host *\n  IdentityFile {d / 'client'}\n  UserKnownHostsFile {d / 'known_hosts'}\n"
                              "  StrictHostKeyChecking accept-new\n  BatchMode yes\n  LogLevel ERROR\n")
    launcher = d / "ssh"
    launcher.write_text(f'#!/bin/sh\nexec ssh -F {d / "config"} "$@"\n')
    launcher.chmod(0o755)
    os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege separation directory
    for name, address in zip(hosts.names, hosts.addresses):
        subprocess.run(["ip", "netns", "exec", name, sshd, "-o", f"ListenAddress={address}", "-h", str(d / "host"),
                        "-o", f"AuthorizedKeysFile={d / 'authorized_keys'}", "-o", "StrictModes=no",
                        "-o", "PasswordAuthentication=no", "-o", f"PidFile={d / name}.pid"], check=True, timeout=30)
    yield hosts.env(HYDRA_LAUNCHER_EXEC=str(launcher))
    for name in hosts.names:
        pid = (d / f"{name}.pid")
        if pid.exists():
            subprocess.run(["kill", pid.read_text().strip()], check=False)


def test_over_openssh_a_run_and_a_dead_rank_as_the_docs_say(hosts, over_ssh, work):
    p = _dlbkit(hosts, work, "run", "farwork:cost", "--items", "300", "--backend", "mpi", "--ranks", "4",
                "--hosts", hosts.spec(SLOTS), "--results", "ssh.json", env=over_ssh)
    assert p.returncode == 0, p.stderr[-3000:]
    assert len(json.loads((work / "ssh.json").read_text())) == 300
    env = dict(over_ssh, DIES_ON=hosts.addresses[2])
    p = _dlbkit(hosts, work, "run", "farwork:dies_far", "--items", "400", "-b", "ss", "--backend", "mpi",
                "--ranks", "4", "--hosts", hosts.spec(SLOTS), env=env)
    last = p.stderr.strip().splitlines()[-1]
    print(f"over OpenSSH: exit status {p.returncode}; {last}")
    assert p.returncode != 0
    assert re.fullmatch(r"dlbkit: rank 3 \(pid \d+ on \S+\) died while computing item \d+", last), p.stderr[-3000:]
