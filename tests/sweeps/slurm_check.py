#!/usr/bin/env python3
"""`infertune sweep --slurm` on a real Slurm: a one-node cluster (munged, slurmctld and slurmd from Debian's slurm-wlm,
on loopback ports of this machine) started by this test in a temporary folder and stopped at the end.

1. A fixture sweep goes out as a job array of 3 slices; one task is requeued (killed and run again) while it is
   measuring, and resumes its slice.
2. The slices' stores, merged, hold the trial set of the same sweep run whole on this machine (the same configuration
   hashes and configurations, each trial once), and `recommend` sees the same candidate configurations in both.

usage: slurm_check.py INFERTUNE FIXTURES_DIR WORKDIR
Exits 77 (skipped) with the reason when Slurm or munge is not installed or the cluster does not come up (no root,
no loopback)."""
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time

DAEMONS = ["munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "sinfo"]
START_TIMEOUT_S = 60
JOB_TIMEOUT_S = 600


def skip(why: str):
    print(f"SKIP: {why}")
    sys.exit(77)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """munged + slurmctld + slurmd, all in `root`; client commands find it through SLURM_CONF."""

    def __init__(self, root: str):
        self.root = root
        self.conf = os.path.join(root, "slurm.conf")
        self.socket = os.path.join(root, "munge.socket")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self.pids = []

    def path(self, name: str) -> str:
        return os.path.join(self.root, name)

    def write_config(self):
        host = socket.gethostname().split(".")[0]
        user = subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip()
        lines = [
            "ClusterName=infertunetest", f"SlurmctldHost={host}(127.0.0.1)", f"SlurmUser={user}", f"SlurmdUser={user}",
            f"SlurmctldPort={free_port()}", f"SlurmdPort={free_port()}", "AuthType=auth/munge", "CredType=cred/munge",
            f"AuthInfo=socket={self.socket}", f"StateSaveLocation={self.path('state')}",
            f"SlurmdSpoolDir={self.path('spool')}", f"SlurmctldPidFile={self.path('slurmctld.pid')}",
            f"SlurmdPidFile={self.path('slurmd.pid')}", f"SlurmctldLogFile={self.path('slurmctld.log')}",
            f"SlurmdLogFile={self.path('slurmd.log')}", "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none", "SchedulerType=sched/backfill", "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core", "ReturnToService=2", "MpiDefault=none", "SwitchType=switch/none",
            f"NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} State=UNKNOWN",
            f"PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP",
        ]
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    def start(self):
        for d in ("state", "spool"):
            os.makedirs(self.path(d), exist_ok=True)
        key = self.path("munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o600)
        self.write_config()
        munged = subprocess.run(["munged", "--force", f"--socket={self.socket}", f"--key-file={key}",
                                 f"--log-file={self.path('munged.log')}", f"--pid-file={self.path('munged.pid')}",
                                 f"--seed-file={self.path('munged.seed')}"], capture_output=True, text=True)
        if munged.returncode != 0:
            skip(f"munged did not start: {munged.stderr.strip()[-300:]}")
        self.pids.append(self.path("munged.pid"))
        for daemon in (["slurmctld", "-i"], ["slurmd"]):
            started = subprocess.run(daemon + ["-f", self.conf], env=self.env, capture_output=True, text=True)
            if started.returncode != 0:
                skip(f"{daemon[0]} did not start: {started.stderr.strip()[-300:]}")
            self.pids.append(self.path(f"{daemon[0]}.pid"))
        deadline = time.time() + START_TIMEOUT_S
        while time.time() < deadline:
            state = subprocess.run(["sinfo", "-h", "-o", "%t"], env=self.env, capture_output=True, text=True)
            if state.stdout.strip() == "idle":
                return
            time.sleep(0.5)
        skip(f"the one-node cluster did not come up within {START_TIMEOUT_S} s: {self.log_tail()}")

    def log_tail(self) -> str:
        tails = []
        for name in ("slurmctld.log", "slurmd.log"):
            try:
                with open(self.path(name)) as f:
                    tails.append(f"{name}: " + " | ".join(f.read().splitlines()[-3:]))
            except OSError:
                pass
        return "; ".join(tails)

    def stop(self):
        for pid_file in reversed(self.pids):
            try:
                with open(pid_file) as f:
                    os.kill(int(f.read().strip()), signal.SIGTERM)
            except (OSError, ValueError):
                pass

    def queue(self, job: str) -> str:
        return subprocess.run(["squeue", "-h", "-j", job, "-o", "%i %T"], env=self.env, capture_output=True,
                              text=True).stdout.strip()


def trials(db: str) -> dict:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        return dict(c.execute("SELECT config_hash, config FROM trials ORDER BY id").fetchall())


def trial_count(db: str) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
            return c.execute("SELECT count(*) FROM trials").fetchone()[0]
    except sqlite3.Error:
        return 0


def candidates(infertune: str, db: str) -> set:
    out = subprocess.run([infertune, "recommend", "--db", db, "-o", "json"], capture_output=True, text=True, check=True)
    return {json.dumps(c["config"], sort_keys=True) for c in json.loads(out.stdout)["candidates"]}


def main() -> int:
    infertune, fixtures, work = sys.argv[1], sys.argv[2], sys.argv[3]
    missing = [d for d in DAEMONS if not shutil.which(d)]
    if missing:
        skip(f"{', '.join(missing)} not installed (scripts/setup installs slurm-wlm and munge)")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    model = os.path.join(fixtures, "models", "fixture-llama-Q4_0.gguf")
    # 6 trials; a 1 s cooldown before each keeps a task running long enough to be requeued in the middle.
    sweep = [infertune, "sweep", "-m", model, "-t", "1,2", "-p", "16,32", "-n", "8", "--min-reps", "1",
             "--max-reps", "1", "--no-warmup", "--cooldown", "1"]
    cluster = Cluster(os.path.join(work, "cluster"))
    failures = []
    try:
        cluster.start()
        job_dir = os.path.join(work, "job")
        submitted = subprocess.run(sweep + ["--slurm", "--shards", "3", "--slurm-dir", job_dir, "--time", "0:10:00"],
                                   env=cluster.env, capture_output=True, text=True)
        print(submitted.stdout.strip())
        if submitted.returncode != 0:
            print(f"FAIL sweep --slurm exited {submitted.returncode}: {submitted.stderr[-600:]}")
            return 1
        job = submitted.stdout.split("submitted job array ")[1].split()[0]
        shard1 = os.path.join(job_dir, "shard-1.db")
        requeued = False
        deadline = time.time() + JOB_TIMEOUT_S
        while cluster.queue(job) and time.time() < deadline:
            if not requeued and trial_count(shard1) >= 1 and f"{job}_1 RUNNING" in cluster.queue(job):
                subprocess.run(["scontrol", "requeue", f"{job}_1"], env=cluster.env, check=True)
                requeued = True
                print(f"requeued task {job}_1 after {trial_count(shard1)} of its trials")
            if requeued and f"{job}_1 PENDING" in cluster.queue(job):
                # Slurm holds a requeued job back for two minutes (its begin time); let it start now.
                subprocess.run(["scontrol", "update", f"JobId={job}_1", "StartTime=now"], env=cluster.env,
                               capture_output=True)
            time.sleep(0.2)
        if cluster.queue(job):
            print(f"FAIL the job array did not finish within {JOB_TIMEOUT_S} s: {cluster.queue(job)}")
            return 1
        if not requeued:
            failures.append("task 1 finished before it could be requeued")
        with open(os.path.join(job_dir, "shard-1.log")) as f:
            log = f.read()
        # The killed trial is not a failure: it is left for the requeued task, which runs it.
        if requeued and "runs on --resume" not in log:
            failures.append(f"the requeued task's killed trial was not left for --resume: {log[-600:]}")

        whole = os.path.join(work, "whole.db")
        subprocess.run(sweep + ["--db", whole], capture_output=True, text=True, check=True)
        merged = os.path.join(work, "all.db")
        merge = subprocess.run([infertune, "merge", merged] + [os.path.join(job_dir, f"shard-{i}.db") for i in (1, 2, 3)],
                               capture_output=True, text=True)
        print(merge.stdout.strip())
        if merge.returncode != 0:
            failures.append(f"merge exited {merge.returncode}: {merge.stderr[-400:]}")
        elif "it now holds the whole plan" not in merge.stdout:
            failures.append("the merged sweep does not hold the whole plan")
        with sqlite3.connect(f"file:{merged}?mode=ro", uri=True) as c:
            not_ok = c.execute("SELECT count(*) FROM trials WHERE status != 'ok'").fetchone()[0]
        if not_ok:
            failures.append(f"{not_ok} merged trials are not ok (a requeue must lose nothing)")
        if trials(merged) != trials(whole):
            failures.append(f"merged trials differ from the whole sweep's: {len(trials(merged))} against "
                            f"{len(trials(whole))}")
        if candidates(infertune, merged) != candidates(infertune, whole):
            failures.append("recommend sees other candidate configurations in the merged store")
        print(f"{len(trials(merged))} trials in 3 slices, merged; the whole sweep on this machine: {len(trials(whole))}")
    finally:
        cluster.stop()
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
