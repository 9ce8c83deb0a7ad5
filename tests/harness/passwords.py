"""Tests every gateway that checks passwords (authentication FILE, LDAP) must pass, on each
of its frontends: a user's statements run with the right password, a wrong one is refused.

A test module imports them and gives two fixtures: `gateway` (running, checking passwords)
and `login` (a `Login`):

    from harness.passwords import *  # noqa: F401,F403 (the shared tests)
"""

from dataclasses import dataclass, field

import pytest
import requests

from harness import hive
from harness.beeline import binary_url, http_url, run_beeline
from harness.engine import HOST

__all__ = [
    "Login",
    "test_beeline_with_the_right_password_runs_queries_and_a_wrong_one_is_refused",
    "test_beeline_over_http_is_checked_too",
    "test_pyhive_unknown_users_and_wrong_passwords_are_refused_and_nosasl_too",
    "test_rest_calls_need_the_password_too",
]

REFUSED = "wrong user name or password"


@dataclass
class Login:
    """A user the gateway knows, their password, a wrong one, and other (user, password)
    pairs it must refuse."""

    user: str
    password: str
    wrong: str
    refused: list[tuple[str, str]] = field(default_factory=list)


def batches_url(gateway) -> str:
    return f"http://{HOST}:{gateway.rest_port}/api/v1/batches"


def _check_beeline(url: str, login: Login, refusal: str):
    statements = ["SELECT 1 AS one"]
    run = run_beeline(url, statements, user=login.user, password=login.password)
    assert run.returncode == 0, run.describe()
    assert run.result_sets() == [[["one"], ["1"]]]
    run = run_beeline(url, statements, user=login.user, password=login.wrong)
    assert run.returncode != 0, run.describe()
    assert refusal in run.stderr, run.describe()
    assert run.result_sets() == [], run.describe()


def test_beeline_with_the_right_password_runs_queries_and_a_wrong_one_is_refused(gateway, login):
    _check_beeline(binary_url(gateway.port), login, REFUSED)


def test_beeline_over_http_is_checked_too(gateway, login):
    _check_beeline(http_url(gateway.http_port), login, "401")


def test_pyhive_unknown_users_and_wrong_passwords_are_refused_and_nosasl_too(gateway, login):
    for user, password in [(login.user, login.wrong), ("mallory", login.password), *login.refused]:
        with pytest.raises(Exception, match=f"(?i){REFUSED}|bad status|auth"):
            hive.connect(gateway, "sasl", user=user, password=password)
    # NOSASL carries no password.
    with pytest.raises(Exception):
        hive.query(hive.connect(gateway, "nosasl"), "SELECT 1")
    connection = hive.connect(gateway, "sasl", user=login.user, password=login.password)
    try:
        assert hive.query(connection, "SELECT 3 AS three")[2] == [(3,)]
    finally:
        connection.close()


def test_rest_calls_need_the_password_too(gateway, login):
    refused = requests.get(batches_url(gateway), auth=(login.user, login.wrong), timeout=30)
    assert refused.status_code == 401, refused.text
    assert REFUSED in refused.text
    listed = requests.get(batches_url(gateway), auth=(login.user, login.password), timeout=30)
    assert listed.status_code == 200 and listed.json()["batches"] == [], listed.text
