"""A training run holds its memory and file descriptors (tests/bench/long_run.py, shorter): 40
iterations after 10 of warm-up, with a checkpoint every iteration and an intermediate checkpoint
and test phase every 10."""
import pytest

from tests.bench import long_run


@pytest.mark.slow
def test_resident_memory_and_open_files_hold(tmp_path):
    result = long_run.measure(iters=40, warmup=10, batch=256, int_output_iters=10, out_dir=tmp_path)
    assert result["checkpoints_written"] >= 4
    assert result["fds_min"] == result["fds_max"], result["series"]
    assert result["rss_growth"] < long_run.MAX_RSS_GROWTH, result["series"]
