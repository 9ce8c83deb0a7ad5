"""An engine started with a secret accepts only clients that send it as their password."""

import pytest

from harness import hive
from harness.beeline import binary_url, http_url, run_beeline
from harness.engine import start_engine

SECRET = "s3cret"
WRONG = "wrong-Passw0rd"


@pytest.fixture(scope="module")
def engine(engine_binary):
    running = start_engine(engine_binary, "--secret", SECRET, http=True)
    yield running
    running.stop()


def test_beeline_with_the_wrong_password_is_refused(engine):
    run = run_beeline(binary_url(engine.port), ["SELECT 1 AS one"], password=WRONG)
    assert run.returncode != 0, run.describe()
    # Hive JDBC shows the reason the server gave in its SASL BAD/ERROR frame.
    assert "Peer indicated failure" in run.stderr, run.describe()
    assert run.result_sets() == [], run.describe()


def test_beeline_over_http_with_the_wrong_password_is_refused(engine):
    run = run_beeline(http_url(engine.http_port), ["SELECT 1 AS one"], password=WRONG)
    assert run.returncode != 0, run.describe()
    assert "401" in run.stderr, run.describe()


def test_beeline_with_the_secret_runs_queries(engine):
    run = run_beeline(binary_url(engine.port), ["SELECT 1 AS one"], password=SECRET)
    assert run.returncode == 0, run.describe()
    assert run.result_sets() == [[["one"], ["1"]]]


def test_pyhive_with_the_wrong_password_is_refused_then_the_right_one_works(engine):
    with pytest.raises(Exception, match="(?i)auth|password|bad status|peer"):
        hive.connect(engine, "sasl", password=WRONG)
    connection = hive.connect(engine, "sasl", password=SECRET)
    try:
        assert hive.query(connection, "SELECT 1 AS one")[2] == [(1,)]
    finally:
        connection.close()


def test_nosasl_clients_are_refused(engine):
    with pytest.raises(Exception):
        hive.connect(engine, "nosasl")


def test_passwords_are_not_logged(engine):
    with pytest.raises(Exception):
        hive.connect(engine, "sasl", password=WRONG)
    hive.connect(engine, "sasl", password=SECRET).close()
    engine.assert_alive()
    log = engine.stderr_path.read_text(errors="replace")
    assert SECRET not in log
    assert WRONG not in log
