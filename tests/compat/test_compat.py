"""The compat suite: ordinary PyTorch training scripts (scripts/*.py, written exactly as for
PyTorch: `import torch`, torch.nn, torch.optim, torch.utils.data) run unchanged through
`python -m oneflow_like.mock_torch`. Each script asserts that its loss fell; a non-zero exit
fails its case here, with the script's output."""
import glob
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ALL_SCRIPTS = sorted(
    os.path.basename(p)
    for p in glob.glob(os.path.join(HERE, "scripts", "*.py"))
    if not os.path.basename(p).startswith("_")
)


def _shard(scripts):
    """Bazel's test sharding (shard_count in BUILD): shard i of n runs every n-th script,
    and touching TEST_SHARD_STATUS_FILE tells Bazel the test honours the split."""
    total = int(os.environ.get("TEST_TOTAL_SHARDS", "1"))
    index = int(os.environ.get("TEST_SHARD_INDEX", "0"))
    status = os.environ.get("TEST_SHARD_STATUS_FILE")
    if status:
        open(status, "a").close()
    return scripts[index::total]


SCRIPTS = _shard(ALL_SCRIPTS)


def test_the_suite_is_there():
    assert len(ALL_SCRIPTS) >= 36, ALL_SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_runs_unchanged_and_trains(script):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run(
        [sys.executable, "-m", "oneflow_like.mock_torch", os.path.join(HERE, "scripts", script)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert out.returncode == 0, f"{script} failed:\n{out.stdout[-3000:]}\n{out.stderr[-6000:]}"
