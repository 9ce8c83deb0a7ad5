"""Authentication LDAP: the gateway checks every client's password by binding to a real
OpenLDAP server (slapd) as the user, on every frontend (binary SASL, HTTP, REST); a directory
that does not answer is told apart from a wrong password."""

import pytest
import requests

from gateway_fixtures import DEFAULT_CLUSTER, kill_engines_on, start_gateway
from gateway_fixtures import gateway_binary  # noqa: F401 (fixture)
from harness import hive, passwords
from harness.passwords import *  # noqa: F401,F403 (the shared tests: every frontend checks passwords)
from harness.engine import HOST
from harness.ldap import PEOPLE_DN, start_slapd
from harness.zookeeper import free_port

ALICE_PASSWORD = "alice-Ldap-Passw0rd"
BOB_PASSWORD = "bob-Ldap-Passw0rd"
WRONG = "not-Her-Ldap-Passw0rd"


def cluster_dir(root):
    directory = root / "cluster-configs"
    directory.mkdir()
    (directory / "default.yaml").write_text(DEFAULT_CLUSTER)
    return directory


@pytest.fixture(scope="module")
def directory(tmp_path_factory):
    slapd = start_slapd(tmp_path_factory.mktemp("slapd"), {"alice": ALICE_PASSWORD, "bob": BOB_PASSWORD})
    yield slapd
    slapd.stop()


@pytest.fixture(scope="module")
def gateway(gateway_binary, directory, tmp_path_factory):  # noqa: F811
    root = tmp_path_factory.mktemp("ldap")
    # Two patterns, tried in order: alice and bob are found by the second.
    running = start_gateway(gateway_binary, root / "work", cluster_dir(root),
                            "--authentication", "LDAP", "--ldap-url", directory.url,
                            "--ldap-user-dn-pattern", f"cn=%s,ou=admins,dc=example,dc=com:uid=%s,{PEOPLE_DN}")
    yield running
    running.stop()
    kill_engines_on(str(root / "work"))


@pytest.fixture(scope="module")
def login():
    # Bob's password is not Alice's.
    return passwords.Login("alice", ALICE_PASSWORD, WRONG, refused=[("alice", BOB_PASSWORD)])


def test_an_empty_password_is_refused(gateway):
    """It would be an anonymous bind, which slapd takes."""
    empty = requests.get(passwords.batches_url(gateway), auth=("alice", ""), timeout=30)
    assert empty.status_code == 401 and passwords.REFUSED in empty.text, empty.text
    with pytest.raises(Exception):
        hive.connect(gateway, "sasl", user="alice", password="")


def test_user_names_with_ldap_special_characters_cannot_name_another_entry(gateway):
    """Unescaped, `bob,ou=people,dc=example,dc=com` would make the second pattern
    `uid=bob,ou=people,...,ou=people,...`; `*` and `=` would be filter or RDN syntax."""
    for user in [f"bob,{PEOPLE_DN}", "bob+cn=x", "*", "uid=bob", "bob\\", " bob", "#bob"]:
        refused = requests.get(passwords.batches_url(gateway), auth=(user, BOB_PASSWORD), timeout=30)
        assert refused.status_code == 401, (user, refused.text)
        assert "wrong user name or password" in refused.text, (user, refused.text)


def test_passwords_are_never_logged(gateway):
    log = gateway.log()
    assert "LDAP authentication" in log
    for secret in (ALICE_PASSWORD, BOB_PASSWORD, WRONG):
        assert secret not in log


def test_a_directory_that_does_not_answer_is_reported_as_the_operators_problem(gateway_binary,  # noqa: F811
                                                                               tmp_path):
    nothing_listens = free_port()
    gateway = start_gateway(gateway_binary, tmp_path / "work", cluster_dir(tmp_path),
                            "--authentication", "LDAP", "--ldap-url", f"ldap://{HOST}:{nothing_listens}",
                            "--ldap-base-dn", PEOPLE_DN)
    try:
        refused = requests.get(passwords.batches_url(gateway), auth=("alice", ALICE_PASSWORD), timeout=60)
        assert refused.status_code == 401, refused.text
        assert "LDAP server does not answer" in refused.text and "ask an operator" in refused.text, refused.text
        assert "wrong user name or password" not in refused.text
        with pytest.raises(Exception, match="(?i)LDAP server does not answer|bad status|auth"):
            hive.connect(gateway, "sasl", password=ALICE_PASSWORD)
        gateway.wait_for_log(rf"no LDAP server answered.*{nothing_listens}")
        assert ALICE_PASSWORD not in gateway.log()
    finally:
        gateway.stop()
        kill_engines_on(str(tmp_path / "work"))
