"""Authentication FILE: the gateway checks every client's password against a file written
with `htpasswd -B`, on every frontend (binary SASL, HTTP, REST), and reads it again when an
operator changes it."""

import os
import subprocess

import pytest
import requests

from gateway_fixtures import DEFAULT_CLUSTER, kill_engines_on, start_gateway
from gateway_fixtures import gateway_binary  # noqa: F401 (fixture)
from harness import hive
from harness.beeline import binary_url, http_url, run_beeline
from harness.engine import HOST

ALICE_PASSWORD = "alice-Passw0rd"
BOB_PASSWORD = "bob-Passw0rd"
WRONG = "not-Her-Passw0rd"


def htpasswd(path, user: str, password: str, create: bool = False):
    """What an operator runs: `htpasswd -B [-c] FILE USER`, the password on stdin."""
    flags = "-iBc" if create else "-iB"
    subprocess.run(["htpasswd", flags, "-C", "10", str(path), user], input=password, text=True,
                   check=True, capture_output=True)


@pytest.fixture(scope="module")
def gateway(gateway_binary, tmp_path_factory):  # noqa: F811
    root = tmp_path_factory.mktemp("auth")
    cluster_dir = root / "cluster-configs"
    cluster_dir.mkdir()
    (cluster_dir / "default.yaml").write_text(DEFAULT_CLUSTER)
    passwords = root / "passwords"
    htpasswd(passwords, "alice", ALICE_PASSWORD, create=True)
    running = start_gateway(gateway_binary, root / "work", cluster_dir,
                            "--authentication", "FILE", "--password-file", str(passwords))
    running.passwords = passwords
    yield running
    running.stop()
    kill_engines_on(str(root / "work"))


def test_beeline_with_the_right_password_runs_queries_and_a_wrong_one_is_refused(gateway):
    run = run_beeline(binary_url(gateway.port), ["SELECT 1 AS one"], password=ALICE_PASSWORD)
    assert run.returncode == 0, run.describe()
    assert run.result_sets() == [[["one"], ["1"]]]
    run = run_beeline(binary_url(gateway.port), ["SELECT 1 AS one"], password=WRONG)
    assert run.returncode != 0, run.describe()
    assert "Peer indicated failure" in run.stderr and "wrong user name or password" in run.stderr, run.describe()
    assert run.result_sets() == [], run.describe()


def test_beeline_over_http_is_checked_too(gateway):
    run = run_beeline(http_url(gateway.http_port), ["SELECT 2 AS two"], password=ALICE_PASSWORD)
    assert run.returncode == 0, run.describe()
    assert run.result_sets() == [[["two"], ["2"]]]
    run = run_beeline(http_url(gateway.http_port), ["SELECT 2 AS two"], password=WRONG)
    assert run.returncode != 0, run.describe()
    assert "401" in run.stderr, run.describe()


def test_pyhive_unknown_users_and_wrong_passwords_are_refused_and_nosasl_too(gateway):
    for user, password in [("alice", WRONG), ("mallory", ALICE_PASSWORD)]:
        with pytest.raises(Exception, match="(?i)wrong user name or password|bad status|auth"):
            hive.connect(gateway, "sasl", user=user, password=password)
    # NOSASL carries no password.
    with pytest.raises(Exception):
        hive.query(hive.connect(gateway, "nosasl"), "SELECT 1")
    connection = hive.connect(gateway, "sasl", password=ALICE_PASSWORD)
    try:
        assert hive.query(connection, "SELECT 3 AS three")[2] == [(3,)]
    finally:
        connection.close()


def test_rest_calls_need_the_password_too(gateway):
    url = f"http://{HOST}:{gateway.rest_port}/api/v1/batches"
    refused = requests.get(url, auth=("alice", WRONG), timeout=30)
    assert refused.status_code == 401, refused.text
    assert "wrong user name or password" in refused.text
    listed = requests.get(url, auth=("alice", ALICE_PASSWORD), timeout=30)
    assert listed.status_code == 200 and listed.json()["batches"] == [], listed.text


def test_a_user_added_to_the_file_can_connect_and_a_broken_file_keeps_the_last_good_one(gateway):
    with pytest.raises(Exception):
        hive.connect(gateway, "sasl", user="bob", password=BOB_PASSWORD)
    htpasswd(gateway.passwords, "bob", BOB_PASSWORD)
    connection = hive.connect(gateway, "sasl", user="bob", password=BOB_PASSWORD)
    connection.close()
    # A file saved half-written: refused with the line at fault; the users stay as they were.
    good = gateway.passwords.read_text()
    after = len(gateway.log())
    temp = gateway.passwords.with_suffix(".tmp")
    temp.write_text("alice:half-written\n")
    os.replace(temp, gateway.passwords)
    try:
        hive.connect(gateway, "sasl", user="bob", password=BOB_PASSWORD).close()
        gateway.wait_for_log(r"password file not reloaded.*line 1", after=after)
    finally:
        temp.write_text(good)
        os.replace(temp, gateway.passwords)


def test_passwords_are_never_logged(gateway):
    log = gateway.log()
    for secret in (ALICE_PASSWORD, BOB_PASSWORD, WRONG):
        assert secret not in log
    assert "$2y$" not in log, "no password hash either"
