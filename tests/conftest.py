"""Fixtures: the engine binary (built once), a shared engine, and engines of a test's own."""

import pytest

from harness.engine import build_engine, start_engine


@pytest.fixture(scope="session")
def engine_binary():
    return build_engine()


@pytest.fixture(scope="session")
def engine(engine_binary):
    """One engine for the tests that only read: binary (SASL and NOSASL) and HTTP ports,
    demo TPC-H data at the default scale."""
    running = start_engine(engine_binary, http=True)
    yield running
    running.stop()


@pytest.fixture
def start_own_engine(engine_binary):
    """Starts engines that belong to one test (for resource measurements or special
    flags), stopped when the test ends."""
    started = []

    def start(*flags, http=False, env=None):
        running = start_engine(engine_binary, *flags, http=http, env=env)
        started.append(running)
        return running

    yield start
    for running in started:
        running.stop()
