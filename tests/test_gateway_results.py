"""Results through the gateway equal results straight from the engine, over binary and HTTP."""

import pytest

from gateway_fixtures import *  # noqa: F401,F403 (fixtures)
from harness import hive, tpch
from harness.beeline import binary_url, http_url, run_beeline
from test_query_results import PYHIVE_MODES, STATEMENTS


def result_sets(url: str):
    run = run_beeline(url, STATEMENTS, user="ivan")
    assert run.returncode == 0, run.describe()
    sets = run.result_sets()
    assert len(sets) == len(STATEMENTS) and all(sets), run.describe()
    return sets


def test_beeline_results_through_the_gateway_equal_the_engines(engine, kumiho):
    direct = result_sets(binary_url(engine.port))
    assert result_sets(binary_url(kumiho.port)) == direct
    assert result_sets(http_url(kumiho.http_port)) == direct


@pytest.mark.parametrize("mode", PYHIVE_MODES)
def test_pyhive_results_through_the_gateway_equal_the_engines(engine, kumiho, mode):
    def answers(server):
        with hive.connect(server, mode, user="ivan") as connection:
            return [hive.query(connection, sql) for sql in (tpch.Q1, tpch.Q6)]

    assert answers(kumiho) == answers(engine)
