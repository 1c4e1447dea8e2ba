from __future__ import annotations

import os

import pytest
from hypothesis import settings

# check_env also makes a render_mode="human" env: never open a real window in tests
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

# CI sets HYPOTHESIS_PROFILE=ci: the same examples on every run, so a landing never depends
# on the luck of a draw; local runs keep exploring new examples (and found the one CI then
# pinned in test_fuzz_scenario.py).
settings.register_profile("ci", derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_configure(config: pytest.Config) -> None:
    """The package silences Gymnasium's "out of date" warning for its supported -v0 ids when
    it registers them; pytest resets warning filters for each test, so the same filter is
    added here, from the registry (no list of ids to keep in step)."""
    import meeting_gym  # noqa: F401  (registers the env ids)
    from meeting_gym.core.registry import families, out_of_date_filter

    message = out_of_date_filter(families())["message"]
    config.addinivalue_line("filterwarnings", f"ignore:{message}:DeprecationWarning")


@pytest.fixture
def one_torch_thread():
    """Two test workers on two cores: more torch threads only fight each other."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
