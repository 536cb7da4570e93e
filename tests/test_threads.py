"""Two jobs on one machine: every training holds scikit-learn's OpenMP threads (and NumPy's
BLAS) to one setting (`EDT_THREADS`, the config file's `threads`, else half the cores), so two
processes training at once do not spin against each other. The times themselves are the
bench's (`python -m toolkit.bench.threads`, docs/benchmarks.md)."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner
from conftest import lapse_demo, lapse_now

from toolkit import Mirror
from toolkit.analysis.appraise import train
from toolkit.cli import cli
from toolkit.config import bounded_threads, thread_limit


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """A time-lapse demo (the run's one, conftest.lapse_demo): the auctions it saw end, enough to train on."""
    return lapse_demo(tmp_path_factory.mktemp("threads") / "m.db")


def _pools_seen_by_fit(monkeypatch) -> list[dict[str, int]]:
    """The thread pools' sizes each HistGradientBoostingRegressor.fit runs with."""
    from sklearn.ensemble import HistGradientBoostingRegressor
    from threadpoolctl import threadpool_info

    seen: list[dict[str, int]] = []
    original = HistGradientBoostingRegressor.fit

    def fit(self, *args, **kwargs):
        seen.append({pool["user_api"]: pool["num_threads"] for pool in threadpool_info()})
        return original(self, *args, **kwargs)

    monkeypatch.setattr(HistGradientBoostingRegressor, "fit", fit)
    return seen


@pytest.mark.parametrize("setting", ["1", "2"])
def test_every_fit_runs_with_the_threads_the_setting_gives(results, monkeypatch, setting):
    seen = _pools_seen_by_fit(monkeypatch)
    monkeypatch.setenv("EDT_THREADS", setting)
    with Mirror(results, clock=lapse_now) as mirror:
        assert train(mirror, max_iter=20) is not None
    assert len(seen) >= 3 and all(pools.get("openmp") == int(setting) for pools in seen), (
        seen
    )  # the price and live models


def test_the_default_is_half_the_cores_and_the_config_file_can_say(tmp_path, monkeypatch):
    monkeypatch.delenv("EDT_THREADS", raising=False)
    monkeypatch.setenv("EDT_CONFIG", str(tmp_path / "config.toml"))
    cores = len(os.sched_getaffinity(0))
    assert thread_limit() == max(1, cores // 2)
    (tmp_path / "config.toml").write_text("threads = 4\n")
    assert thread_limit() == 4
    with bounded_threads() as limit:
        from threadpoolctl import threadpool_info

        assert limit == 4 and all(p["num_threads"] == 4 for p in threadpool_info() if p["user_api"] == "openmp")


@pytest.mark.parametrize(
    ("value", "said"),
    [("none", "EDT_THREADS: 'none' is not a number of threads"), ("0", "EDT_THREADS: '0' is not a number of threads")],
)
def test_a_bad_setting_is_one_line_and_exit_2_before_anything_is_written(results, tmp_path, monkeypatch, value, said):
    monkeypatch.setenv("EDT_THREADS", value)
    copy = tmp_path / "m.db"
    copy.write_bytes(results.read_bytes())
    before = copy.read_bytes()
    refused = CliRunner().invoke(cli, ["appraise", "--db", str(copy)])
    assert refused.exit_code == 2 and refused.output.strip() == f"edt: {said} (a whole number, 1 or more)"
    assert copy.read_bytes() == before


def test_a_fresh_process_s_first_training_is_held_too(tmp_path):
    """threadpoolctl limits only the libraries already loaded: a process that has not loaded
    scikit-learn yet (`edt appraise`) must get the limit on its first training too."""
    import subprocess
    import sys

    script = (
        "from toolkit.config import bounded_threads\n"
        "with bounded_threads(1):\n"
        "    from sklearn.utils._openmp_helpers import _openmp_effective_n_threads\n"
        "    print(_openmp_effective_n_threads())\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")}
    shown = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert shown.stdout.split() == ["1"]
