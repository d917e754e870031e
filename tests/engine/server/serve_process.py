"""`infertune serve` as a child process for the Python server checks: started on a free port, ready when
/health answers 200, stopped with SIGTERM (its exit status is the caller's to check)."""
import json
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request


class ServeProcess:
    def __init__(self, binary, model, *flags, timeout=60):
        self.proc = subprocess.Popen([binary, "serve", "-m", model, "--port", "0", *flags],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.log = []
        self.port = None
        deadline = time.time() + timeout
        while self.port is None:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("serve exited before listening:\n" + "".join(self.log))
            self.log.append(line)
            m = re.search(r"listening on http://[^:]+:(\d+)", line)
            if m:
                self.port = int(m.group(1))
            if time.time() > deadline:
                raise RuntimeError("serve did not listen in time")
        self.base = f"http://127.0.0.1:{self.port}"
        while True:
            try:
                with urllib.request.urlopen(self.base + "/health", timeout=5) as r:
                    if r.status == 200:
                        break
            except urllib.error.HTTPError as e:
                if e.code != 503:
                    raise
            except urllib.error.URLError:
                pass
            if time.time() > deadline:
                raise RuntimeError("serve not ready in time")
            time.sleep(0.05)

    def request(self, path, body=None, key=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method="POST" if data else "GET")
        req.add_header("Content-Type", "application/json")
        if key:
            req.add_header("Authorization", "Bearer " + key)
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def metrics(self, key=None):
        status, text = self.request("/metrics", key=key)
        assert status == 200, text
        out = {}
        for line in text.splitlines():
            if line and not line.startswith("#") and "{" not in line:
                name, value = line.split()
                out[name] = float(value)
        return out

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def stop(self):
        """SIGTERM; returns the exit status and the whole log."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rest, _ = self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rest, _ = self.proc.communicate()
        self.log.append(rest or "")
        return self.proc.returncode, "".join(self.log)
