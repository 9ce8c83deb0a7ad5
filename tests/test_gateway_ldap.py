"""Authentication LDAP: the gateway checks every client's password by binding to a real
OpenLDAP server (slapd) as the user, on every frontend (binary SASL, HTTP, REST); a directory
that does not answer is told apart from a wrong password."""

import pytest
import requests

from gateway_fixtures import DEFAULT_CLUSTER, kill_engines_on, start_gateway
from gateway_fixtures import gateway_binary  # noqa: F401 (fixture)
from harness import hive
from harness.beeline import binary_url, http_url, run_beeline
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


def test_beeline_with_the_right_password_runs_queries_and_a_wrong_one_is_refused(gateway):
    run = run_beeline(binary_url(gateway.port), ["SELECT 1 AS one"], password=ALICE_PASSWORD)
    assert run.returncode == 0, run.describe()
    assert run.result_sets() == [[["one"], ["1"]]]
    run = run_beeline(binary_url(gateway.port), ["SELECT 1 AS one"], password=WRONG)
    assert run.returncode != 0, run.describe()
    assert "Peer indicated failure" in run.stderr and "wrong user name or password" in run.stderr, run.describe()
    assert run.result_sets() == [], run.describe()


def test_beeline_over_http_is_checked_too(gateway):
    run = run_beeline(http_url(gateway.http_port), ["SELECT 2 AS two"], user="bob", password=BOB_PASSWORD)
    assert run.returncode == 0, run.describe()
    assert run.result_sets() == [[["two"], ["2"]]]
    run = run_beeline(http_url(gateway.http_port), ["SELECT 2 AS two"], user="bob", password=WRONG)
    assert run.returncode != 0, run.describe()
    assert "401" in run.stderr, run.describe()


def test_pyhive_unknown_users_wrong_and_empty_passwords_are_refused_and_nosasl_too(gateway):
    for user, password in [("alice", WRONG), ("mallory", ALICE_PASSWORD), ("alice", BOB_PASSWORD)]:
        with pytest.raises(Exception, match="(?i)wrong user name or password|bad status|auth"):
            hive.connect(gateway, "sasl", user=user, password=password)
    # An empty password would be an anonymous bind, which slapd takes.
    url = f"http://{HOST}:{gateway.rest_port}/api/v1/batches"
    empty = requests.get(url, auth=("alice", ""), timeout=30)
    assert empty.status_code == 401 and "wrong user name or password" in empty.text, empty.text
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


def test_user_names_with_ldap_special_characters_cannot_name_another_entry(gateway):
    """Unescaped, `bob,ou=people,dc=example,dc=com` would make the second pattern
    `uid=bob,ou=people,...,ou=people,...`; `*` and `=` would be filter or RDN syntax."""
    url = f"http://{HOST}:{gateway.rest_port}/api/v1/batches"
    for user in [f"bob,{PEOPLE_DN}", "bob+cn=x", "*", "uid=bob", "bob\\", " bob", "#bob"]:
        refused = requests.get(url, auth=(user, BOB_PASSWORD), timeout=30)
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
        url = f"http://{HOST}:{gateway.rest_port}/api/v1/batches"
        refused = requests.get(url, auth=("alice", ALICE_PASSWORD), timeout=60)
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
