"""What the server comparisons (compare_serve.py, compare_embeddings.py) share: a server process started on a free
port and waited for, stopped with SIGTERM, and llama-server found (built by scripts/build-llama-cpp and cached)."""
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url, proc, timeout=300):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/health", timeout=5) as r:
                if r.status == 200:
                    return
        except Exception:  # noqa: BLE001 - not up yet
            pass
        time.sleep(0.2)
    raise RuntimeError("the server did not become ready")


class ServerProcess:
    """`command` (which must take --port last) on a free port, logging to `log_path`, until the `with` ends."""

    def __init__(self, command, log_path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(log_path, "a")
        self.proc = subprocess.Popen([*command, "--port", str(self.port)], stdout=self.log, stderr=subprocess.STDOUT)

    def __enter__(self):
        wait_ready(self.url, self.proc)
        return self

    def __exit__(self, *exc):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def llama_server_binary(who):
    """llama-server from scripts/build-llama-cpp (built on first use); exits naming `who` when it cannot be built."""
    built = subprocess.run([os.path.join(ROOT, "scripts", "build-llama-cpp"), "llama-server"], capture_output=True,
                           text=True)
    if built.returncode != 0:
        sys.exit(f"{who}: cannot build llama-server: {built.stderr}")
    return os.path.join(built.stdout.strip().splitlines()[-1], "llama-server")


def add_comparison_arguments(parser, workdir):
    """The flags every server comparison takes: the model and the servers' shape, rounds, binaries and outputs."""
    parser.add_argument("-m", "--model", required=True)
    parser.add_argument("-t", "--threads", type=int, default=2)
    parser.add_argument("-np", "--parallel", type=int, default=4)
    parser.add_argument("-c", "--ctx", type=int, default=4096)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--infertune", default=os.path.join(ROOT, "build", "release", "sweeps", "infertune"))
    parser.add_argument("--llama-server", help="default: scripts/build-llama-cpp's")
    parser.add_argument("--json", help="write every round's figures here")
    parser.add_argument("--workdir", default=workdir, help="the servers' logs")


def prepare(args, who):
    """The work directory made, and llama-server found when not given."""
    os.makedirs(args.workdir, exist_ok=True)
    if not args.llama_server:
        args.llama_server = llama_server_binary(who)
