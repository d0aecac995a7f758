"""Two processes under ``accelerate launch`` on the CPU split the work: every (model, prompt, idx) exactly once.

``accelerate launch --cpu`` starts a single process unless MPI is configured, so the test launches the way
docs/running-a-study.md tells GPU users to (``--multi_gpu --num_processes N``): on a machine without CUDA the
processes form a gloo group on the CPU. Several tiny models and more items than processes; half the items exist
before the launch, so the resume path and the sharding are checked together.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from datamodel.catalog import PromptSpec, add_prompts
from datamodel.connection import connect
from datamodel.media import MediaStore
from generators.demo import demo_models
from generators.pipelines import make_generator
from generators.runner import run

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


def test_two_accelerate_processes_make_every_item_exactly_once(tmp_path):
    db = connect(tmp_path / "arena.db")
    ids = add_prompts(db, [PromptSpec("s", f"k{i}", f"An image of thing number {i}") for i in range(5)]).ids
    specs = demo_models()
    # before the launch: demo-sketch already made its images for the first two prompts
    run(db, MediaStore(tmp_path / "media"), [specs["demo-sketch"]], ids[:2], make_generator, images_per_prompt=2)
    db.close()

    env = {**os.environ, "PYTHONPATH": str(ROOT), "ACCELERATE_DISABLE_RICH": "1", "OMP_NUM_THREADS": "1",
           "CUDA_VISIBLE_DEVICES": "", "MASTER_PORT": str(29500 + os.getpid() % 1000)}
    command = [
        sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
        "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port",
        env["MASTER_PORT"], "-m", "generators", "--db", str(tmp_path / "arena.db"), "--media-dir",
        str(tmp_path / "media"), "--cache-dir", str(tmp_path / "cache"), "run", "--models",
        "demo-tiny-unet,demo-sketch", "--suite", "s", "--images-per-prompt", "2", "--batch-size", "3", "--quiet",
    ]
    result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "process 1/2:" in result.stdout and "process 2/2:" in result.stdout
    made = sum(int(line.split(": ")[1].split()[0]) for line in result.stdout.splitlines()
               if line.startswith("process "))
    assert made == 2 * 5 * 2 - 4  # everything but the four that existed, each made once

    db = connect(tmp_path / "arena.db")
    rows = db.execute(
        "SELECT m.name, i.prompt_id, i.idx, COUNT(*) FROM images i JOIN models m ON m.id = i.model_id "
        "GROUP BY m.name, i.prompt_id, i.idx"
    ).fetchall()
    assert {(name, prompt_id, idx) for name, prompt_id, idx, _ in rows} == {
        (name, prompt_id, idx) for name in ("demo-tiny-unet", "demo-sketch") for prompt_id in ids for idx in (0, 1)
    }
    assert all(count == 1 for *_, count in rows)
