"""Authentication FILE: the gateway checks every client's password against a file written
with `htpasswd -B`, on every frontend (binary SASL, HTTP, REST), and reads it again when an
operator changes it."""

import os
import subprocess

import pytest

from gateway_fixtures import DEFAULT_CLUSTER, kill_engines_on, start_gateway
from gateway_fixtures import gateway_binary  # noqa: F401 (fixture)
from harness import hive, passwords
from harness.passwords import *  # noqa: F401,F403 (the shared tests: every frontend checks passwords)

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
    password_file = root / "passwords"
    htpasswd(password_file, "alice", ALICE_PASSWORD, create=True)
    running = start_gateway(gateway_binary, root / "work", cluster_dir,
                            "--authentication", "FILE", "--password-file", str(password_file))
    running.passwords = password_file
    yield running
    running.stop()
    kill_engines_on(str(root / "work"))


@pytest.fixture(scope="module")
def login():
    return passwords.Login("alice", ALICE_PASSWORD, WRONG)


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
