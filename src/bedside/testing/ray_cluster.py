"""A Ray cluster of ``ray start`` processes on 127.0.0.1, and a run driven on it from a subprocess: for the fault
tests and ``bench/scale.py --faults``.

Why processes, not :class:`ray.cluster_utils.Cluster` in the test process: a Ray driver exits when the raylet it
is connected to dies, and a cluster torn down badly takes its driver with it. Here the test (or the benchmark)
holds neither: every node is a ``ray start --block`` process in its own session (its raylet, GCS, agents and
workers stay in that session), and the run's driver is a third process (:class:`RunDriver`). The test process
only starts and kills processes and reads the store, so a node lost, a limiter killed or a failed teardown can
fail a test but never end the test process.

Nodes: ``--node-ip-address 127.0.0.1``, free ports picked here (a node whose process exits before it started, as
it would if another process took one of its ports in between, is started again with fresh ports), ``--temp-dir``
under the cluster's own temporary folder (so ``address="auto"`` elsewhere never finds it), dashboard off, usage
statistics off, and Ray's HTTP probes sent to a closed loopback port (the same environment as
:func:`bedside.runs.ray_executor.loopback_ray_env`). ``ray start --address`` refuses to join a cluster where
Ray's cluster mode is off, and with it on it replaces 127.0.0.1 by the address its own detection finds (a UDP
socket towards 8.8.8.8), where the head does not listen; so each node runs Ray's own ``ray start`` command
through :func:`_ray_start`, which turns cluster mode on for that check only and answers Ray's IP lookup with
127.0.0.1. The processes it starts run with cluster mode off, as every other Ray process here does.

Teardown (:meth:`LocalRayCluster.stop`) sends SIGTERM to each ``ray start`` process (it stops its node's
processes), then SIGKILL to every process of its session that is left, with a hang guard of a minute per node. It
never runs ``ray stop``, which kills every Ray process of the machine by name, other users' included.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import queue
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from bedside.llm.scripted_server import ScriptedServer
from bedside.runs.config import RunConfig
from bedside.runs.ray_executor import NOWHERE_PROXY

MARK = "bedside-driver: "
"""The prefix of the driver's own lines on its stdout (Ray may print there too)."""
START_TIMEOUT_S = 300.0
"""Hang guard for a node or a driver to come up on a loaded machine (not a timing assertion)."""
LAUNCH_ATTEMPTS = 3
"""How many times a node is started with fresh ports when its process exits before Ray says it started."""
STOP_TIMEOUT_S = 60.0
"""How long a node's ``ray start`` process may take to stop its processes after SIGTERM before SIGKILL."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def loopback_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of every process of the cluster and of its drivers: Ray kept on 127.0.0.1 (cluster mode
    off: no IP detection), no usage statistics, Ray's HTTP probes to a closed loopback port, and a dead node
    noticed within seconds (the head checks each raylet every second; five failed checks in a row)."""
    env = dict(os.environ if base is None else base)
    env.update(
        {
            "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
            "RAY_USAGE_STATS_ENABLED": "0",
            "http_proxy": NOWHERE_PROXY,
            "HTTP_PROXY": NOWHERE_PROXY,
            "no_proxy": "",
            "NO_PROXY": "",
            "RAY_health_check_period_ms": "1000",
        }
    )
    return env


@dataclass
class RayNode:
    """One node: its ``ray start --block`` process, leader of a session holding every process of the node."""

    process: subprocess.Popen[bytes]
    log: Path
    head: bool
    num_cpus: int
    resources: dict[str, float]

    @property
    def alive(self) -> bool:
        return self.process.poll() is None


@dataclass
class LocalRayCluster:
    """A head node and any number of other nodes, each a ``ray start`` process on 127.0.0.1 (module docstring).

    ``with LocalRayCluster(env) as cluster: cluster.start(); cluster.add_node(...)``; ``env``: the environment of
    the nodes' processes and drivers (``PYTHONPATH`` and ``BEDSIDE_TASKS`` reach the Ray workers from here)."""

    env: dict[str, str] = field(default_factory=loopback_env)
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="bray-")))
    """Short on purpose: Ray's socket paths under it must stay under the 107 characters a Unix socket allows."""
    port: int = 0
    nodes: list[RayNode] = field(default_factory=list)
    launched: int = 0
    """``ray start`` processes started so far, failed attempts included."""

    def __post_init__(self) -> None:
        # Ray's token authentication with a token of this cluster's own (not ~/.ray/auth_token, which a local
        # ray.init creates and `ray start --head` would then require of the other nodes, who do not look for it)
        token = self.root / "auth_token"
        token.touch(mode=0o600)
        token.write_text(secrets.token_hex(32))
        self.env.update({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token)})

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def __enter__(self) -> LocalRayCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _launch(
        self, args: Callable[[], list[str]], *, head: bool, num_cpus: int, resources: Mapping[str, float]
    ) -> RayNode:
        """Start a node, and start it again (fresh ports from ``args``) if its process exits before Ray says it
        started: a free port is found here and released before Ray binds it, so another process may take it
        in between. A node that fails every attempt, or never starts, raises with its log."""
        for _ in range(LAUNCH_ATTEMPTS):
            node = self._launch_once(args(), head=head, num_cpus=num_cpus, resources=resources)
            if node.alive:
                return node
            self.nodes.remove(node)
        raise RuntimeError(f"a Ray node did not start ({LAUNCH_ATTEMPTS} attempts):\n{tail(node.log)}")

    def _launch_once(self, args: list[str], *, head: bool, num_cpus: int, resources: Mapping[str, float]) -> RayNode:
        """One ``ray start`` process, waited for until Ray says it started or the process exits (returned dead)."""
        index = self.launched  # every attempt its own folder and log, a failed one's kept for its error
        self.launched += 1
        temp = self.root / str(index)
        log = self.root / f"node{index}.log"
        command = [
            sys.executable,
            "-m",
            "bedside.testing.ray_cluster",
            "node",
            "--block",
            "--node-ip-address=127.0.0.1",
            f"--num-cpus={num_cpus}",
            f"--resources={json.dumps(dict(resources))}",
            f"--temp-dir={temp}",
            "--disable-usage-stats",
            f"--dashboard-agent-listen-port={_free_port()}",
            *args,
        ]
        with log.open("wb") as out:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=self.env,
                start_new_session=True,
            )
        node = RayNode(process, log, head, num_cpus, dict(resources))
        self.nodes.append(node)
        deadline = time.monotonic() + START_TIMEOUT_S
        while b"Ray runtime started" not in log.read_bytes():
            if not node.alive:
                self._kill(node)
                return node
            if time.monotonic() > deadline:
                self._kill(node)
                raise RuntimeError(f"a Ray node did not start ({' '.join(command)}):\n{tail(log)}")
            time.sleep(0.2)
        return node

    def start(self, num_cpus: int = 1, resources: Mapping[str, float] | None = None) -> RayNode:
        """Start the head node (``ray start --head``)."""
        if self.nodes:
            raise RuntimeError("the head node is started already")

        def head_args() -> list[str]:
            self.port = _free_port()
            return [
                "--head",
                f"--port={self.port}",
                f"--ray-client-server-port={_free_port()}",
                "--include-dashboard=false",
            ]

        return self._launch(head_args, head=True, num_cpus=num_cpus, resources=resources or {})

    def add_node(self, num_cpus: int = 1, resources: Mapping[str, float] | None = None) -> RayNode:
        """Start another node (``ray start --address HEAD``); the driver checks that the head sees it."""
        if not self.nodes:
            raise RuntimeError("start the head node first")
        return self._launch(
            lambda: [f"--address={self.address}"], head=False, num_cpus=num_cpus, resources=resources or {}
        )

    def live_nodes(self) -> list[RayNode]:
        return [node for node in self.nodes if node.alive]

    def kill_node(self, node: RayNode) -> None:
        """Lose ``node`` as a crash would: SIGKILL to every process of it (its session)."""
        self._kill(node)

    def _kill(self, node: RayNode) -> None:
        """SIGKILL every process of the node's session, until none is left (a worker may be starting)."""
        session = node.process.pid
        for _ in range(100):
            members = _session_members(session)
            if not members:
                break
            for pid in members:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)  # for them to be gone before looking again
        with contextlib.suppress(subprocess.TimeoutExpired):
            node.process.wait(timeout=STOP_TIMEOUT_S)

    def stop(self) -> None:
        """Stop every node, the others before the head: SIGTERM to ``ray start`` (it stops its processes), then
        SIGKILL to every process of its session that is left (always, so no raylet or worker outlives the cluster)."""
        for node in reversed(self.nodes):
            if node.alive:
                with contextlib.suppress(ProcessLookupError):
                    node.process.send_signal(signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    node.process.wait(timeout=STOP_TIMEOUT_S)
            self._kill(node)
        self.nodes.clear()
        shutil.rmtree(self.root, ignore_errors=True)

    def drive(self, config: RunConfig, *, workers: int, nodes: int | None = None, log: Path | None = None) -> RunDriver:
        """Run ``config`` on this cluster with ``workers`` Ray workers from a driver subprocess, once the head sees
        ``nodes`` live nodes (default: every node started here and still running)."""
        return RunDriver(self, config, workers=workers, nodes=nodes or len(self.live_nodes()), log=log)


def _session_members(session: int) -> list[int]:
    """The live processes of a session (a node's ``ray start`` leads one: Ray puts each worker in a process group
    of its own, but they all stay in the session)."""
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if os.getsid(int(entry)) == session and _state(int(entry)) != "Z":
                    members.append(int(entry))
    return members


def _state(pid: int) -> str:
    """A process's state letter (``Z``: a zombie, dead already, waiting for its parent to reap it)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2]


def tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


class RunDriver:
    """A run's Ray driver in its own process (``python -m bedside.testing.ray_cluster drive``): it connects, waits
    for the nodes, runs ``execute_ray`` and writes the summary (or the error) as JSON. Meanwhile it takes commands
    on stdin (:meth:`command`): ``kill-limiter`` (SIGKILL the run's limits actor, answered once Ray restarted it)
    and ``kill-worker`` (SIGKILL a Ray worker that is not on the head node)."""

    def __init__(self, cluster: LocalRayCluster, config: RunConfig, *, workers: int, nodes: int, log: Path | None):
        self.folder = Path(tempfile.mkdtemp(prefix="driver-", dir=cluster.root))
        self.result_path = self.folder / "result.json"
        self.log = log or self.folder / "driver.log"
        config_path = self.folder / "config.json"
        config_path.write_text(config.model_dump_json())
        command = [
            sys.executable,
            "-m",
            "bedside.testing.ray_cluster",
            "drive",
            f"--address={cluster.address}",
            f"--config={config_path}",
            f"--workers={workers}",
            f"--nodes={nodes}",
            f"--result={self.result_path}",
        ]
        with self.log.open("w") as err:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                env=cluster.env,
                text=True,
                start_new_session=True,
            )
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True).start()

    def _read(self, stream: IO[str] | None) -> None:
        assert stream is not None
        for line in stream:
            if line.startswith(MARK):
                self.lines.put(json.loads(line[len(MARK) :]))
        self.lines.put(None)

    def __enter__(self) -> RunDriver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()

    def kill(self) -> None:
        """End the driver (its process group) if it is still running."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=STOP_TIMEOUT_S)

    def _failed(self, what: str) -> RuntimeError:
        return RuntimeError(f"the Ray driver {what} (exit {self.process.poll()}); its log:\n{tail(self.log)}")

    def _next(self, timeout_s: float) -> dict[str, Any]:
        try:
            line = self.lines.get(timeout=timeout_s)
        except queue.Empty:
            raise self._failed(f"said nothing for {timeout_s:g} s") from None
        if line is None:
            raise self._failed("ended")
        return line

    def command(self, name: str, timeout_s: float = START_TIMEOUT_S) -> dict[str, Any]:
        """Send a command (class docstring) and return its answer."""
        assert self.process.stdin is not None
        self.process.stdin.write(name + "\n")
        self.process.stdin.flush()
        while (answer := self._next(timeout_s)).get("command") != name:
            continue
        if "error" in answer:
            raise self._failed(f"could not {name}: {answer['error']}")
        return answer

    def wait_for(
        self, server: ScriptedServer, condition: Callable[[dict[str, Any]], bool], timeout_s: float = START_TIMEOUT_S
    ) -> dict[str, Any]:
        """``server.wait_until(condition)``, failing at once (with the driver's log) if the driver ends first."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return server.wait_until(condition, timeout_s=2.0)
            except TimeoutError:
                if self.process.poll() is not None:
                    raise self._failed("ended before the server saw what was awaited") from None
                if time.monotonic() > deadline:
                    raise
                continue

    def finish(self, timeout_s: float = 600.0) -> dict[str, Any]:
        """Wait for the run to end; its result: ``{"run_id", "summary": {...}}`` or ``{"run_id", "error": {type,
        message}}``. ``timeout_s`` is a hang guard: the driver is killed and this raises."""
        assert self.process.stdin is not None
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        try:
            self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            raise self._failed(f"did not finish within {timeout_s:g} s") from None
        if not self.result_path.exists():
            raise self._failed("wrote no result")
        result: dict[str, Any] = json.loads(self.result_path.read_text())
        return result


# ----------------------------------------------------------------------------- in the subprocesses


def _ray_start(argv: list[str]) -> None:
    """Ray's own ``ray start`` with 127.0.0.1 as this node's address (see the module docstring)."""
    from ray._private import ray_constants, services
    from ray.scripts.scripts import main

    ray_constants.ENABLE_RAY_CLUSTER = True  # `ray start --address` aborts without it
    services.get_node_ip_address = lambda address=None: "127.0.0.1"  # ... and would detect a non-loopback address
    sys.argv = ["ray", "start", *argv]
    main()


def _say(message: dict[str, Any]) -> None:
    print(MARK + json.dumps(message), flush=True)


def _named_actor(prefix: str) -> Any:
    import ray

    for entry in ray.util.list_named_actors(all_namespaces=True):
        if entry["name"].startswith(prefix):
            return ray.get_actor(entry["name"], namespace=entry["namespace"])
    raise LookupError(f"no live actor named {prefix}...")


def _kill_limiter() -> dict[str, Any]:
    """SIGKILL the run's limits actor (as a crash would) and wait until Ray has restarted it."""
    import ray

    from bedside.llm.shared_limiter import NAME_PREFIX

    limiter = _named_actor(NAME_PREFIX)
    killed = int(ray.get(limiter.pid.remote()))
    os.kill(killed, signal.SIGKILL)
    restarted = killed
    deadline = time.monotonic() + START_TIMEOUT_S
    while restarted == killed and time.monotonic() < deadline:  # a call that raced the kill may reach the old life
        restarted = int(ray.get(limiter.pid.remote()))  # waits while Ray restarts it (calls are retried)
    if restarted == killed:
        raise RuntimeError("the limits actor was not restarted")
    return {"killed": killed, "restarted": restarted}


def _kill_worker() -> dict[str, Any]:
    """SIGKILL one Ray worker of the run that runs on another node than this driver's (the head)."""
    import ray

    from bedside.runs.ray_executor import WORKER_PREFIX

    here = ray.get_runtime_context().get_node_id()
    for entry in ray.util.list_named_actors(all_namespaces=True):
        if entry["name"].startswith(WORKER_PREFIX):
            actor = ray.get_actor(entry["name"], namespace=entry["namespace"])
            if ray.get(actor.node.remote()) != here:
                pid = int(ray.get(actor.pid.remote()))
                os.kill(pid, signal.SIGKILL)
                return {"killed": pid}
    raise LookupError("no Ray worker of the run on another node")


def _serve_commands() -> None:
    commands = {"kill-limiter": _kill_limiter, "kill-worker": _kill_worker}
    for line in sys.stdin:
        name = line.strip()
        try:
            _say({"command": name, **commands[name]()})
        except Exception as exc:  # answered, so the test says what went wrong
            _say({"command": name, "error": f"{type(exc).__name__}: {exc}"})


def _drive(args: argparse.Namespace) -> int:
    import ray

    from bedside.runs.ray_executor import execute_ray, loopback_ray_env

    config = RunConfig.model_validate_json(Path(args.config).read_text())
    with loopback_ray_env():
        ray.init(address=args.address, namespace="bedside", log_to_driver=False)
    deadline = time.monotonic() + START_TIMEOUT_S
    while sum(1 for node in ray.nodes() if node["Alive"]) < args.nodes:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the head never saw {args.nodes} live nodes: {ray.nodes()}")
        time.sleep(0.2)
    addresses = {node["NodeManagerAddress"] for node in ray.nodes()}
    if addresses != {"127.0.0.1"}:
        raise RuntimeError(f"Ray did not stay on 127.0.0.1 (nodes at {sorted(addresses)})")
    threading.Thread(target=_serve_commands, daemon=True).start()
    result: dict[str, Any] = {"run_id": config.run_id}
    try:
        summary = asyncio.run(execute_ray(config, cache=False, address=args.address, workers=args.workers))
        result["summary"] = {
            "ran": summary.ran,
            "errors": summary.errors,
            "retried": summary.retried,
            "wall_s": summary.wall_s,
        }
    except Exception as exc:
        result["error"] = {"type": type(exc).__name__, "message": str(exc)}
    Path(args.result).write_text(json.dumps(result))
    ray.shutdown()
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["node"]:
        _ray_start(argv[1:])
        return 0
    parser = argparse.ArgumentParser(prog="python -m bedside.testing.ray_cluster")
    sub = parser.add_subparsers(dest="what", required=True)
    drive = sub.add_parser("drive", help="run a config on a cluster (RunDriver's subprocess)")
    drive.add_argument("--address", required=True)
    drive.add_argument("--config", required=True)
    drive.add_argument("--workers", type=int, required=True)
    drive.add_argument("--nodes", type=int, default=1)
    drive.add_argument("--result", required=True)
    return _drive(parser.parse_args(argv))


@contextlib.contextmanager
def two_node_cluster(env: Mapping[str, str] | None = None) -> Iterator[LocalRayCluster]:
    """A head and one more node, one CPU each (the second with a ``second-node`` resource), stopped on exit."""
    with LocalRayCluster(loopback_env(env)) as cluster:
        cluster.start(num_cpus=1)
        cluster.add_node(num_cpus=1, resources={"second-node": 1})
        yield cluster


if __name__ == "__main__":
    sys.exit(main())
