"""Authentication LDAP: the gateway checks every client's password by binding to a real
OpenLDAP server (slapd) as the user, on every frontend (binary SASL, HTTP, REST); a directory
that does not answer is told apart from a wrong password. With a bind DN it searches for the
user as a service account first; user and group filters and a custom query admit only some
users, and tell the others, once their password is right, that they are not allowed. Over
StartTLS or ldaps:// the directory's certificate must chain to the operator's CA file."""

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from gateway_fixtures import default_cluster_dir, kill_engines_on, start_gateway
from gateway_fixtures import gateway_binary  # noqa: F401 (fixture)
from harness import hive, passwords
from harness.beeline import binary_url, run_beeline
from harness.passwords import *  # noqa: F401,F403 (the shared tests: every frontend checks passwords)
from harness.engine import HOST
from harness.ldap import BASE_DN, GROUPS_DN, PEOPLE_DN, SERVICE_DN, ssha, start_slapd
from harness.zookeeper import free_port

ALICE_PASSWORD = "alice-Ldap-Passw0rd"
BOB_PASSWORD = "bob-Ldap-Passw0rd"
CAROL_PASSWORD = "carol-Ldap-Passw0rd"
TWIN_PASSWORD = "twin-Ldap-Passw0rd"
SERVICE_PASSWORD = "svc-Kumiho-Bind-Passw0rd"
WRONG = "not-Her-Ldap-Passw0rd"
NOT_ALLOWED = "is not allowed to use this gateway"
# Two entries hold uid=twin (one under ou=people, one under ou=contractors): a search finds both.
CONTRACTORS_DN = f"ou=contractors,{BASE_DN}"
TWIN_ELSEWHERE = [
    f"dn: {CONTRACTORS_DN}\nobjectClass: organizationalUnit\nou: contractors\n",
    f"dn: uid=twin,{CONTRACTORS_DN}\nobjectClass: inetOrgPerson\nuid: twin\ncn: twin\nsn: twin\n"
    f"userPassword: {ssha(TWIN_PASSWORD)}\n",
]


@pytest.fixture(scope="module")
def directory(tmp_path_factory):
    # alice and carol are analysts, bob is in no group.
    slapd = start_slapd(tmp_path_factory.mktemp("slapd"),
                        {"alice": ALICE_PASSWORD, "bob": BOB_PASSWORD, "carol": CAROL_PASSWORD,
                         "twin": TWIN_PASSWORD},
                        groups={"analysts": ["alice", "carol"], "ops": ["carol"]},
                        service_password=SERVICE_PASSWORD, extra_ldif=TWIN_ELSEWHERE)
    yield slapd
    slapd.stop()


@pytest.fixture(scope="module")
def gateway(gateway_binary, directory, tmp_path_factory):  # noqa: F811
    root = tmp_path_factory.mktemp("ldap")
    # Two patterns, tried in order: alice and bob are found by the second.
    running = start_gateway(gateway_binary, root / "work", default_cluster_dir(root),
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
    gateway = start_gateway(gateway_binary, tmp_path / "work", default_cluster_dir(tmp_path),
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


def rest_login(gateway, user: str, password: str) -> requests.Response:
    return requests.get(passwords.batches_url(gateway), auth=(user, password), timeout=30)


@pytest.fixture(scope="module")
def searching_gateway(gateway_binary, directory, tmp_path_factory):  # noqa: F811
    """Searches as the service account (its password from the environment) under the base DN;
    admits alice and bob by name, and only members of analysts: alice, not bob nor carol."""
    root = tmp_path_factory.mktemp("ldap-search")
    os.environ["KUMIHO_LDAP_BIND_PASSWORD"] = SERVICE_PASSWORD
    try:
        running = start_gateway(gateway_binary, root / "work", default_cluster_dir(root),
                                "--authentication", "LDAP", "--ldap-url", directory.url,
                                "--ldap-bind-dn", SERVICE_DN, "--ldap-base-dn", BASE_DN,
                                "--ldap-user-filter", "alice,BOB", "--ldap-group-filter", "analysts",
                                "--ldap-group-dn-pattern", f"cn=%s,{GROUPS_DN}")
    finally:
        del os.environ["KUMIHO_LDAP_BIND_PASSWORD"]
    yield running
    running.stop()
    kill_engines_on(str(root / "work"))


def test_a_user_found_by_the_service_account_logs_in_with_beeline_and_pyhive(searching_gateway):
    run = run_beeline(binary_url(searching_gateway.port), ["SELECT 1 AS one"], user="alice", password=ALICE_PASSWORD)
    assert run.returncode == 0, run.describe()
    assert run.result_sets() == [[["one"], ["1"]]]
    connection = hive.connect(searching_gateway, "sasl", user="alice", password=ALICE_PASSWORD)
    try:
        assert hive.query(connection, "SELECT 2 AS two")[2] == [(2,)]
    finally:
        connection.close()
    assert rest_login(searching_gateway, "alice", ALICE_PASSWORD).status_code == 200


def test_wrong_passwords_unknown_users_and_names_two_entries_hold_are_refused_alike(searching_gateway):
    """The service account itself is no user: no search for people finds it."""
    for user, password in [("alice", WRONG), ("alice", BOB_PASSWORD), ("mallory", ALICE_PASSWORD),
                           ("twin", TWIN_PASSWORD), ("kumiho", SERVICE_PASSWORD), ("alice", "")]:
        refused = rest_login(searching_gateway, user, password)
        assert refused.status_code == 401, (user, refused.text)
        assert passwords.REFUSED in refused.text and NOT_ALLOWED not in refused.text, (user, refused.text)
    with pytest.raises(Exception, match=f"(?i){passwords.REFUSED}|bad status|auth"):
        hive.connect(searching_gateway, "sasl", user="alice", password=WRONG)


def test_users_the_filters_leave_out_are_told_they_are_not_allowed_once_their_password_is_right(
        searching_gateway):
    """bob is in the user filter but in no group, carol in the group but not in the user filter;
    with a wrong password both get the usual answer, which says nothing of the filters."""
    for user, password in [("bob", BOB_PASSWORD), ("carol", CAROL_PASSWORD)]:
        refused = rest_login(searching_gateway, user, password)
        assert refused.status_code == 401, (user, refused.text)
        assert NOT_ALLOWED in refused.text and passwords.REFUSED not in refused.text, (user, refused.text)
        assert "analysts" not in refused.text and "alice" not in refused.text, refused.text
        wrong = rest_login(searching_gateway, user, WRONG)
        assert wrong.status_code == 401 and passwords.REFUSED in wrong.text, wrong.text
        assert NOT_ALLOWED not in wrong.text, wrong.text
    run = run_beeline(binary_url(searching_gateway.port), ["SELECT 1"], user="bob", password=BOB_PASSWORD)
    assert run.returncode != 0 and NOT_ALLOWED in run.stderr, run.describe()


def test_a_user_name_holding_filter_syntax_cannot_log_in_as_someone_else(searching_gateway):
    """Unescaped, `*)(uid=*` would make the search `(uid=*)(uid=*)`, `*` match every user:
    with alice's password they would log in as alice under another name."""
    for user in ["*", "*)(uid=*", "alice)(uid=*", "al*", "alice)(|(uid=*", "*)(cn=alice", "alice\\"]:
        refused = rest_login(searching_gateway, user, ALICE_PASSWORD)
        assert refused.status_code == 401, (user, refused.text)
        assert passwords.REFUSED in refused.text, (user, refused.text)


def test_the_bind_password_is_never_logged_nor_shown(searching_gateway):
    log = searching_gateway.log()
    assert "LDAP authentication" in log and SERVICE_DN in log
    for secret in (SERVICE_PASSWORD, ALICE_PASSWORD, BOB_PASSWORD, CAROL_PASSWORD):
        assert secret not in log


def test_a_service_account_the_directory_refuses_is_reported_as_the_operators_problem(gateway_binary,  # noqa: F811
                                                                                     directory, tmp_path):
    """The bind password from the config file this time."""
    config = tmp_path / "kumiho.yaml"
    config.write_text(f"ldap-bind-dn: {SERVICE_DN}\nldap-bind-password: {WRONG}\n")
    gateway = start_gateway(gateway_binary, tmp_path / "work", default_cluster_dir(tmp_path), "--config", str(config),
                            "--authentication", "LDAP", "--ldap-url", directory.url, "--ldap-base-dn", BASE_DN)
    try:
        refused = rest_login(gateway, "alice", ALICE_PASSWORD)
        assert refused.status_code == 401, refused.text
        assert "cannot search its LDAP directory" in refused.text and "ask an operator" in refused.text
        assert passwords.REFUSED not in refused.text and WRONG not in refused.text, refused.text
        gateway.wait_for_log("refused the gateway's bind as")
        assert WRONG not in gateway.log() and ALICE_PASSWORD not in gateway.log()
    finally:
        gateway.stop()
        kill_engines_on(str(tmp_path / "work"))


# Each admits alice (an analyst) and leaves out bob, with users binding by the DN pattern.
ADMITTING_ANALYSTS = {
    "custom query for the group": ["--ldap-base-dn", BASE_DN,
                                   "--ldap-custom-query", "(&(objectClass=groupOfNames)(cn=analysts))"],
    "custom query for the user": ["--ldap-base-dn", BASE_DN, "--ldap-custom-query",
                                  f"(&(objectClass=person)(uid=%s)(seeAlso=cn=analysts,{GROUPS_DN}))"],
    "group listed by the user": ["--ldap-base-dn", BASE_DN, "--ldap-group-filter", "ops,analysts",
                                 "--ldap-group-dn-pattern", f"cn=%s,{GROUPS_DN}",
                                 "--ldap-user-membership-key", "seeAlso"],
}


@pytest.fixture(scope="module", params=list(ADMITTING_ANALYSTS))
def admitting_gateway(request, gateway_binary, directory, tmp_path_factory):  # noqa: F811
    root = tmp_path_factory.mktemp("ldap-admit")
    running = start_gateway(gateway_binary, root / "work", default_cluster_dir(root),
                            "--authentication", "LDAP", "--ldap-url", directory.url,
                            "--ldap-user-dn-pattern", f"uid=%s,{PEOPLE_DN}", *ADMITTING_ANALYSTS[request.param])
    yield running
    running.stop()
    kill_engines_on(str(root / "work"))


def test_a_custom_query_or_the_users_own_group_list_admits_only_analysts(admitting_gateway):
    assert rest_login(admitting_gateway, "alice", ALICE_PASSWORD).status_code == 200
    left_out = rest_login(admitting_gateway, "bob", BOB_PASSWORD)
    assert left_out.status_code == 401 and NOT_ALLOWED in left_out.text, left_out.text
    for user, password in [("bob", WRONG), ("*)(uid=*", ALICE_PASSWORD), ("alice", WRONG)]:
        refused = rest_login(admitting_gateway, user, password)
        assert refused.status_code == 401 and passwords.REFUSED in refused.text, (user, refused.text)


@dataclass
class TlsDirectory:
    """slapd with a certificate an internal CA issued, refusing passwords sent in clear."""
    slapd: object
    ca_file: Path
    # A CA that issued nothing slapd holds.
    other_ca_file: Path


def issue_certificates(directory: Path) -> tuple[Path, Path, Path, Path]:
    """What an operator's PKI does: a CA, and a certificate it issues for the directory's
    address; and another CA. Returns the CA, the certificate, its key and the other CA."""
    def run(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=directory)

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    for ca in ("ca", "other-ca"):
        run("req", "-x509", *ec, "-keyout", f"{ca}.key", "-out", f"{ca}.pem", "-days", "2",
            "-subj", f"/CN=Kumiho test {ca}", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    run("req", *ec, "-keyout", "ldap.key", "-out", "ldap.csr", "-subj", f"/CN={HOST}")
    (directory / "ldap.ext").write_text(f"subjectAltName=IP:{HOST},DNS:localhost\nextendedKeyUsage=serverAuth\n")
    run("x509", "-req", "-in", "ldap.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "ldap.pem", "-days", "2", "-extfile", "ldap.ext")
    return (directory / "ca.pem", directory / "ldap.pem", directory / "ldap.key",
            directory / "other-ca.pem")


@pytest.fixture(scope="module")
def tls_directory(tmp_path_factory):
    root = tmp_path_factory.mktemp("ldap-tls")
    ca_file, certificate, key, other_ca_file = issue_certificates(root)
    slapd = start_slapd(root / "slapd", {"alice": ALICE_PASSWORD}, tls=(certificate, key))
    yield TlsDirectory(slapd, ca_file, other_ca_file)
    slapd.stop()


def tls_gateway(gateway_binary, root: Path, url: str, *tls_flags: str):  # noqa: F811
    return start_gateway(gateway_binary, root / "work", default_cluster_dir(root), "--authentication", "LDAP",
                         "--ldap-url", url, "--ldap-user-dn-pattern", f"uid=%s,{PEOPLE_DN}", *tls_flags)


@pytest.mark.parametrize("mode", ["starttls", "ldaps"])
def test_passwords_travel_under_tls_to_a_directory_the_operators_ca_vouches_for(gateway_binary, tls_directory,  # noqa: F811
                                                                               tmp_path, mode):
    """The directory refuses binds in clear, so a login that works went over TLS."""
    ca = ["--ldap-ca-file", str(tls_directory.ca_file)]
    gateway = (tls_gateway(gateway_binary, tmp_path, tls_directory.slapd.url, "--ldap-start-tls", "true", *ca)
               if mode == "starttls" else tls_gateway(gateway_binary, tmp_path, tls_directory.slapd.ldaps_url, *ca))
    try:
        connection = hive.connect(gateway, "sasl", user="alice", password=ALICE_PASSWORD)
        try:
            assert hive.query(connection, "SELECT current_user() AS u")[2] == [("alice",)]
        finally:
            connection.close()
        wrong = rest_login(gateway, "alice", WRONG)
        assert wrong.status_code == 401 and passwords.REFUSED in wrong.text, wrong.text
        assert ALICE_PASSWORD not in gateway.log()
    finally:
        gateway.stop()
        kill_engines_on(str(tmp_path / "work"))


def test_a_gateway_that_binds_in_clear_is_refused_by_a_directory_requiring_tls(gateway_binary, tls_directory,  # noqa: F811
                                                                              tmp_path):
    """What the test above relies on: without StartTLS, slapd refuses the password, and the
    user is told it is the operator's problem, not a wrong password."""
    gateway = tls_gateway(gateway_binary, tmp_path, tls_directory.slapd.url)
    try:
        refused = rest_login(gateway, "alice", ALICE_PASSWORD)
        assert refused.status_code == 401 and "ask an operator" in refused.text, refused.text
        assert passwords.REFUSED not in refused.text, refused.text
        gateway.wait_for_log(r"(?i)confidentiality ?required")
    finally:
        gateway.stop()


@pytest.mark.parametrize("trust", ["another CA", "the system's store"])
def test_a_directory_certificate_no_trusted_ca_issued_fails_the_check_not_the_password(gateway_binary,  # noqa: F811
                                                                                     tls_directory, tmp_path, trust):
    ca = ["--ldap-ca-file", str(tls_directory.other_ca_file)] if trust == "another CA" else []
    gateway = tls_gateway(gateway_binary, tmp_path, tls_directory.slapd.ldaps_url, *ca)
    try:
        refused = rest_login(gateway, "alice", ALICE_PASSWORD)
        assert refused.status_code == 401 and "ask an operator" in refused.text, refused.text
        assert passwords.REFUSED not in refused.text, refused.text
        gateway.wait_for_log(r"no LDAP server answered.*UnknownIssuer")
        with pytest.raises(Exception):
            hive.connect(gateway, "sasl", user="alice", password=ALICE_PASSWORD)
    finally:
        gateway.stop()


def test_tls_settings_that_would_do_nothing_stop_the_start(gateway_binary, tls_directory, tmp_path):  # noqa: F811
    common = [str(gateway_binary), "--bind-host", HOST, "--binary-port", "0", "--http-port", "0",
              "--metrics-enabled", "false", "--rest-enabled", "false", "--work-dir", str(tmp_path / "work"),
              "--cluster-configs", str(tmp_path), "--authentication", "LDAP",
              "--ldap-user-dn-pattern", f"uid=%s,{PEOPLE_DN}"]
    cases = [
        (["--ldap-url", tls_directory.slapd.ldaps_url, "--ldap-start-tls", "true"], "ldap-start-tls upgrades"),
        (["--ldap-url", tls_directory.slapd.url, "--ldap-ca-file", str(tls_directory.ca_file)],
         "no LDAP server is reached over TLS"),
        (["--ldap-url", tls_directory.slapd.ldaps_url, "--ldap-ca-file", str(tmp_path / "absent.pem")],
         f"ldap-ca-file {tmp_path / 'absent.pem'} does not exist"),
    ]
    for flags, expected in cases:
        started = subprocess.run(common + flags, capture_output=True, text=True, timeout=30)
        assert started.returncode != 0 and expected in started.stderr, (flags, started.stderr)
