"""What the architecture cross-checks (gemma3_crosscheck.py, qwen3_crosscheck.py) share: running infertune, its
logits and greedy tokens for a prompt of token ids, and the distance of two logit matrices."""
import re
import subprocess

import numpy as np


def run(cmd: list, **kw) -> subprocess.CompletedProcess:
    """Runs cmd, raising with the end of its stderr when it fails."""
    result = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])}... exited {result.returncode}: {result.stderr[-600:]}")
    return result


def infertune_logits(infertune: str, model: str, ids: list, out: str, cache_type: str, n_ctx: int) -> np.ndarray:
    """`infertune run`'s logits of the prompt `ids` (one batch, 2 threads), [len(ids)][n_vocab]."""
    run([infertune, "run", "-m", model, "--prompt-tokens", ",".join(map(str, ids)), "-n", "0", "-t", "2",
         "-c", str(n_ctx), "-ctk", cache_type, "-ctv", cache_type, "--logits-out", out])
    return np.fromfile(out, dtype="<f4").reshape(len(ids), -1).astype(np.float64)


def infertune_greedy(infertune: str, model: str, ids: list, n: int, n_ctx: int = 0) -> list:
    """The ids `infertune run --temp 0` generates after `ids` (at most n: it stops at the end of generation), with a
    context of n_ctx cells (0: run's default; phi3's rope factors depend on it)."""
    result = run([infertune, "run", "-m", model, "--prompt-tokens", ",".join(map(str, ids)), "-n", str(n),
                  "--temp", "0", "-t", "2", "--print-ids", "-c", str(n_ctx)])
    return [int(t) for t in re.findall(r"-?\d+", result.stdout)]


def relative_diff(got: np.ndarray, ref: np.ndarray) -> tuple:
    """(rms of got - ref, max |got - ref|), each over the standard deviation of ref."""
    d = got - ref
    std = float(ref.std())
    return float(np.sqrt(np.mean(d * d)) / std), float(np.abs(d).max() / std)
