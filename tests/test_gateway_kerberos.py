"""Authentication KERBEROS: a real MIT KDC (Debian's krb5-kdc) on loopback issues tickets;
the gateway accepts them with its keytab on every frontend: SASL GSSAPI on the binary port
(beeline with Hadoop's UGI in Kerberos mode, PyHive through pure-sasl), SPNEGO on the Thrift
HTTP port (beeline) and the REST API (curl --negotiate). The session user is the principal's
short name. Clients without a ticket, with a ticket for another service, asking for a QOP
other than auth, or with a password (PLAIN, NOSASL, Basic) are refused with what to do, and
the gateway goes on serving; a gateway whose clock is off tells clients so; a gateway whose
keytab is missing or holds another principal does not start; ZooKeeper discovery hands Hive
JDBC the principal. Under `KERBEROS,FILE` and `KERBEROS,LDAP` (with a real slapd) one
gateway takes tickets and passwords both, each client choosing. A gateway requiring SASL QOP
auth-int signs or encrypts every frame (a relay recording the bytes sees no SQL text under
auth-conf) and maps principals by Hadoop's auth_to_local rules."""

import glob
import os
import subprocess
from pathlib import Path

import pytest
import requests
from pyhive import hive as pyhive

from gateway_fixtures import (default_cluster_dir, discovery_url, engine_pids, ha_flags, kill_engines_on,
                              start_gateway)
from gateway_fixtures import gateway_binary, zookeeper  # noqa: F401 (fixtures)
from harness import hive
from harness.beeline import http_url, run_beeline
from harness.passwords import REFUSED
from test_gateway_authentication import htpasswd
from harness.kerberos import REALM, start_kdc
from harness.ldap import PEOPLE_DN, start_slapd
from harness.relay import Relay
from harness.tls import TRUSTSTORE_PASSWORD, make_certificate

# Clients name the host as the service principal does: `localhost`, as written (the realm's
# krb5.conf turns DNS canonicalisation off, for C and Java clients alike).
HOST_NAME = "localhost"
SERVICE = "kumiho"
PRINCIPAL = f"{SERVICE}/{HOST_NAME}@{REALM}"
ALICE_PASSWORD = "alice-Krb-Passw0rd"
BOB_PASSWORD = "bob-Krb-Passw0rd"
ETL_PASSWORD = "etl-Krb-Passw0rd"
# What a PLAIN, NOSASL or Basic client is told.
KERBEROS_ONLY = "this server authenticates with Kerberos only"


@pytest.fixture(scope="module")
def kdc(tmp_path_factory):
    directory = tmp_path_factory.mktemp("kdc")
    kdc = start_kdc(directory)
    kdc.add_principal("alice", password=ALICE_PASSWORD)
    # bob's ticket is for an instance: his session user is still `bob`.
    kdc.add_principal("bob/analyst", password=BOB_PASSWORD)
    # A batch job's principal: auth_to_local rules map its instance into the user.
    kdc.add_principal("etl/batchhost", password=ETL_PASSWORD)
    kdc.add_principal(f"{SERVICE}/{HOST_NAME}")
    # The SPNEGO principal, which HTTP clients such as curl ask for by default.
    kdc.add_principal(f"HTTP/{HOST_NAME}")
    # Another service, whose key is in the gateway's keytab but which no frontend serves.
    kdc.add_principal(f"other/{HOST_NAME}")
    for name in (SERVICE, "HTTP", "other"):
        kdc.export_keytab(f"{name}/{HOST_NAME}", directory / "kumiho.keytab")
    kdc.export_keytab(f"other/{HOST_NAME}", directory / "other.keytab")
    yield kdc
    kdc.stop()


@pytest.fixture(scope="module")
def tickets(kdc):
    """Ticket caches by user; `nobody`'s is a cache with no ticket."""
    return {
        "alice": kdc.kinit("alice", ALICE_PASSWORD, kdc.directory / "alice.ccache"),
        "bob": kdc.kinit("bob/analyst", BOB_PASSWORD, kdc.directory / "bob.ccache"),
        "etl": kdc.kinit("etl/batchhost", ETL_PASSWORD, kdc.directory / "etl.ccache"),
        "nobody": kdc.directory / "nobody.ccache",
    }


def kerberos_flags(keytab, authentication: str = "KERBEROS") -> tuple[str, ...]:
    # `_HOST` becomes the advertised host, the name clients connect to.
    return ("--authentication", authentication, "--kerberos-principal", f"{SERVICE}/_HOST@{REALM}",
            "--kerberos-keytab", str(keytab), "--advertised-host", HOST_NAME)


SPNEGO_FLAGS = ("--kerberos-spnego-principal", f"HTTP/_HOST@{REALM}")


@pytest.fixture(scope="module")
def gateway(gateway_binary, kdc, tmp_path_factory):  # noqa: F811
    root = tmp_path_factory.mktemp("kerberos")
    running = start_gateway(gateway_binary, root / "work", default_cluster_dir(root),
                            *kerberos_flags(kdc.directory / "kumiho.keytab"), *SPNEGO_FLAGS, env=kdc.env())
    yield running
    running.stop()
    kill_engines_on(str(root / "work"))


def binary_url(gateway, principal: str = PRINCIPAL) -> str:
    return f"jdbc:hive2://{HOST_NAME}:{gateway.port}/default;principal={principal}"


def pyhive_connect(gateway, monkeypatch, kdc, ccache, service: str = SERVICE):
    """PyHive with auth='KERBEROS' in this process: the ticket cache comes from the
    environment, which MIT krb5 reads at each new context."""
    for key, value in kdc.env(ccache).items():
        if key.startswith("KRB5"):
            monkeypatch.setenv(key, value)
    return pyhive.connect(HOST_NAME, gateway.port, auth="KERBEROS", kerberos_service_name=service)


def current_user_and_answer(connection) -> list:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user() AS who, 40 + 2 AS answer")
        return cursor.fetchall()


def assert_beeline_runs_as(session_user: str, url: str, **login):
    """beeline at `url`, with a ticket (`env=`) or a `user` and `password`, runs as
    `session_user`."""
    run = run_beeline(url, ["SELECT current_user() AS who"], **login)
    assert run.returncode == 0 and run.result_sets() == [[["who"], [session_user]]], run.describe()


def test_beeline_with_a_ticket_runs_queries_as_the_principals_short_name(gateway, kdc, tickets):
    run = run_beeline(binary_url(gateway), ["SELECT current_user() AS who, 40 + 2 AS answer"],
                      env=kdc.java_env(tickets["alice"]))
    assert run.returncode == 0, run.describe()
    assert run.result_sets() == [[["who", "answer"], ["alice", "42"]]], run.describe()


def test_engines_get_the_gateways_ticket_for_secure_hadoop(gateway, kdc, tickets):
    """What spark-submit --proxy-user needs on a secure cluster: a ticket of the gateway's
    principal, which the gateway gets with kinit from its keytab and hands engines in
    KRB5CCNAME."""
    run = run_beeline(binary_url(gateway), ["SELECT 1 AS one"], env=kdc.java_env(tickets["alice"]))
    assert run.returncode == 0, run.describe()
    [pid, *_] = engine_pids(gateway.work_dir)
    environ = (Path("/proc") / str(pid) / "environ").read_bytes().decode().split("\0")
    [cache] = [entry.split("=", 1)[1] for entry in environ if entry.startswith("KRB5CCNAME=")]
    assert cache == f"FILE:{gateway.work_dir.resolve()}/kerberos/krb5cc_gateway", cache
    listed = subprocess.run(["klist", "-c", cache], env=kdc.env(), capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    assert f"Default principal: {PRINCIPAL}" in listed.stdout and f"krbtgt/{REALM}@{REALM}" in listed.stdout, \
        listed.stdout


def test_beeline_over_http_authenticates_with_spnego_then_its_cookie(gateway, kdc, tickets):
    # Hive JDBC replaces `_HOST` with the host it connects to, as the gateway does with its own.
    url = (f"jdbc:hive2://{HOST_NAME}:{gateway.http_port}/default;transportMode=http;"
           f"httpPath=cliservice;principal={SERVICE}/_HOST@{REALM}")
    run = run_beeline(url, ["SELECT current_user() AS who", "SELECT 7 AS seven"],
                      env=kdc.java_env(tickets["bob"]))
    assert run.returncode == 0, run.describe()
    assert run.result_sets() == [[["who"], ["bob"]], [["seven"], ["7"]]], run.describe()


def test_pyhive_with_auth_kerberos(gateway, kdc, tickets, monkeypatch):
    with pyhive_connect(gateway, monkeypatch, kdc, tickets["bob"]) as connection:
        assert current_user_and_answer(connection) == [("bob", 42)]


@pytest.mark.parametrize("transport", ["binary", "http"])
def test_impyla_with_gssapi(gateway, kdc, tickets, monkeypatch, transport):
    """impyla makes a fresh token per HTTP request until the auth cookie comes back."""
    from impala.dbapi import connect

    for key, value in kdc.env(tickets["alice"]).items():
        if key.startswith("KRB5"):
            monkeypatch.setenv(key, value)
    options = {"use_http_transport": True, "http_path": "cliservice"} if transport == "http" else {}
    port = gateway.http_port if transport == "http" else gateway.port
    connection = connect(host=HOST_NAME, port=port, auth_mechanism="GSSAPI", kerberos_service_name=SERVICE,
                         **options)
    try:
        cursor = connection.cursor()
        for _ in range(2):
            cursor.execute("SELECT current_user() AS who")
            assert cursor.fetchall() == [("alice",)]
    finally:
        connection.close()


def test_a_client_without_a_ticket_is_refused_by_its_own_library(gateway, kdc, tickets, monkeypatch):
    """No ticket, no token: the client's Kerberos library refuses before the gateway hears
    anything; the gateway serves the next client."""
    run = run_beeline(binary_url(gateway), ["SELECT 1"], env=kdc.java_env(tickets["nobody"]))
    assert run.returncode != 0, run.describe()
    assert "GSS initiate failed" in run.stdout + run.stderr, run.describe()
    with pytest.raises(Exception, match="(?i)credentials|ticket|cache"):
        pyhive_connect(gateway, monkeypatch, kdc, tickets["nobody"])
    with pyhive_connect(gateway, monkeypatch, kdc, tickets["alice"]) as connection:
        assert current_user_and_answer(connection) == [("alice", 42)]


def test_a_ticket_for_another_service_is_refused_with_the_gss_text(gateway, kdc, tickets, monkeypatch):
    """The client asks a ticket for `other/localhost`, which the gateway has no key for: the
    gateway says why (MIT's status text) and whose principal to ask for, and logs it."""
    before = len(gateway.log())
    with pytest.raises(Exception) as refused:
        pyhive_connect(gateway, monkeypatch, kdc, tickets["alice"], service="other")
    message = str(refused.value)
    assert "Kerberos authentication failed" in message and PRINCIPAL in message, message
    logged = gateway.wait_for_log(r"SASL authentication refused.*Kerberos authentication failed[^\n]*", after=before)
    assert PRINCIPAL in logged, logged
    with pyhive_connect(gateway, monkeypatch, kdc, tickets["alice"]) as connection:
        assert current_user_and_answer(connection) == [("alice", 42)]


def test_a_client_demanding_integrity_or_confidentiality_finds_only_qop_auth(gateway, kdc, tickets):
    """The gateway offers QOP auth only (HiveServer2's default): Hive JDBC asking for
    auth-conf refuses the offer itself, and the gateway serves the next client."""
    run = run_beeline(binary_url(gateway) + ";saslQop=auth-conf", ["SELECT 1"], env=kdc.java_env(tickets["alice"]))
    assert run.returncode != 0, run.describe()
    assert "No common protection layer" in run.stdout + run.stderr, run.describe()
    run = run_beeline(binary_url(gateway) + ";saslQop=auth", ["SELECT 1 AS one"], env=kdc.java_env(tickets["alice"]))
    assert run.result_sets() == [[["one"], ["1"]]], run.describe()


def test_password_and_nosasl_clients_are_told_to_use_kerberos(gateway, kdc, tickets):
    run = run_beeline(f"jdbc:hive2://{HOST_NAME}:{gateway.port}/default", ["SELECT 1"],
                      user="alice", password=ALICE_PASSWORD)
    assert run.returncode != 0, run.describe()
    assert KERBEROS_ONLY in run.stdout + run.stderr, run.describe()
    for mode, password in [("sasl", ALICE_PASSWORD), ("nosasl", None)]:
        with pytest.raises(Exception) as refused:
            with hive.connect(gateway, mode, user="alice", password=password) as connection:
                hive.query(connection, "SELECT 1")
        assert KERBEROS_ONLY in str(refused.value), (mode, refused.value)
    # Still serving.
    run = run_beeline(binary_url(gateway), ["SELECT 1 AS one"], env=kdc.java_env(tickets["alice"]))
    assert run.result_sets() == [[["one"], ["1"]]], run.describe()


def test_a_wrong_password_in_kinit_is_the_clients_matter(gateway, kdc, tickets, monkeypatch):
    failed = kdc.try_kinit("alice", "not-" + ALICE_PASSWORD, kdc.directory / "wrong.ccache")
    assert failed.returncode != 0 and "Password incorrect" in failed.stderr, failed.stderr
    with pyhive_connect(gateway, monkeypatch, kdc, tickets["alice"]) as connection:
        assert current_user_and_answer(connection) == [("alice", 42)]


def curl_negotiate(kdc, ccache, url: str, *extra: str, service: str = SERVICE) -> subprocess.CompletedProcess:
    return subprocess.run(["curl", "-s", "--negotiate", "-u", ":", "--service-name", service,
                           "-w", "\\n%{http_code}", *extra, url],
                          env=kdc.env(ccache), capture_output=True, text=True, timeout=60)


def test_http_ports_also_take_the_spnego_principal_and_the_binary_port_does_not(gateway, kdc, tickets,
                                                                                 monkeypatch):
    """curl asks for HTTP/localhost unless told otherwise: the HTTP ports take it
    (`kerberos-spnego-principal`); a ticket for a principal of the keytab that no frontend
    serves is refused, and the binary port takes only the service principal."""
    batches = f"http://{HOST_NAME}:{gateway.rest_port}/api/v1/batches"
    spnego = curl_negotiate(kdc, tickets["alice"], batches, service="HTTP")
    body, status = spnego.stdout.rsplit("\n", 1)
    assert status == "200" and '"batches":[]' in body, spnego
    other = curl_negotiate(kdc, tickets["alice"], batches, service="other")
    body, status = other.stdout.rsplit("\n", 1)
    assert status == "401" and f"the ticket is for other/{HOST_NAME}@{REALM}" in body, other
    with pytest.raises(Exception, match="Kerberos authentication failed"):
        pyhive_connect(gateway, monkeypatch, kdc, tickets["alice"], service="HTTP")


def test_rest_and_thrift_http_take_spnego_from_curl(gateway, kdc, tickets):
    batches = f"http://{HOST_NAME}:{gateway.rest_port}/api/v1/batches"
    answered = curl_negotiate(kdc, tickets["alice"], batches)
    body, status = answered.stdout.rsplit("\n", 1)
    assert status == "200" and '"batches":[]' in body, answered
    # Basic credentials and no credentials: 401 with the Negotiate challenge and what to do.
    basic = requests.get(batches, auth=("alice", ALICE_PASSWORD), timeout=30)
    assert basic.status_code == 401 and "takes Negotiate" in basic.text, basic.text
    bare = requests.get(batches, timeout=30)
    assert bare.status_code == 401 and bare.headers["WWW-Authenticate"] == "Negotiate", bare.headers
    assert f"--service-name {SERVICE}" in bare.text, bare.text
    # Thrift over HTTP: authenticated, so the body is what is refused.
    thrift = f"http://{HOST_NAME}:{gateway.http_port}/cliservice"
    posted = curl_negotiate(kdc, tickets["alice"], thrift, "--data-binary", "not thrift")
    body, status = posted.stdout.rsplit("\n", 1)
    assert status == "400" and "not one TBinaryProtocol message" in body, posted
    posted = curl_negotiate(kdc, tickets["nobody"], thrift, "--data-binary", "not thrift")
    body, status = posted.stdout.rsplit("\n", 1)
    assert status == "401" and "send a Kerberos ticket" in body, posted


def test_tokens_are_never_logged(gateway, kdc, tickets):
    """Kerberos and SPNEGO tokens are DER: base64 `YII...`. Accepted and refused ones alike
    stay out of the log."""
    batches = f"http://{HOST_NAME}:{gateway.rest_port}/api/v1/batches"
    for service in (SERVICE, "other"):
        curl_negotiate(kdc, tickets["alice"], batches, service=service)
    requests.get(batches, headers={"Authorization": "Negotiate YIIforged"}, timeout=30)
    assert "YII" not in gateway.log()


def test_a_gateway_whose_clock_is_off_says_so(gateway_binary, kdc, tickets, tmp_path, monkeypatch):  # noqa: F811
    """A gateway 10 minutes ahead (libfaketime; Kerberos allows 5): the client is told
    "Clock skew too great" with what to check."""
    [libfaketime] = glob.glob("/usr/lib/*/faketime/libfaketime.so.1")
    skewed = {**kdc.env(), "LD_PRELOAD": libfaketime, "FAKETIME": "+10m"}
    running = start_gateway(gateway_binary, tmp_path / "work", default_cluster_dir(tmp_path),
                            *kerberos_flags(kdc.directory / "kumiho.keytab"), env=skewed)
    try:
        with pytest.raises(Exception, match="Clock skew too great.*its clock is within"):
            pyhive_connect(running, monkeypatch, kdc, tickets["alice"])
    finally:
        running.stop()


def test_the_gateway_does_not_start_without_a_key_for_its_principal(gateway_binary, kdc, tmp_path):  # noqa: F811
    missing = tmp_path / "missing.keytab"
    with pytest.raises(RuntimeError, match=f"cannot read kerberos-keytab {missing}"):
        start_gateway(gateway_binary, tmp_path / "work", default_cluster_dir(tmp_path), *kerberos_flags(missing),
                      env=kdc.env())
    # A keytab that holds another principal's key.
    other = kdc.directory / "other.keytab"
    second = tmp_path / "second"
    second.mkdir()
    with pytest.raises(RuntimeError, match=f"cannot accept Kerberos clients as {PRINCIPAL} with kerberos-keytab {other}"):
        start_gateway(gateway_binary, second / "work", default_cluster_dir(second), *kerberos_flags(other), env=kdc.env())


def test_zookeeper_discovery_hands_clients_the_principal(gateway_binary, kdc, tickets, zookeeper, tmp_path):  # noqa: F811
    """The registration advertises KERBEROS and the principal; Hive JDBC takes the principal
    from it, so a discovery URL needs no `principal=`."""
    running = start_gateway(gateway_binary, tmp_path / "work", default_cluster_dir(tmp_path),
                            *kerberos_flags(kdc.directory / "kumiho.keytab"), *ha_flags(zookeeper.address, "krb"),
                            env=kdc.env())
    try:
        [node] = zookeeper.children("/krb")
        data = zookeeper.get(f"/krb/{node}").decode()
        assert (";hive.server2.authentication=KERBEROS;"
                f"hive.server2.authentication.kerberos.principal={PRINCIPAL}") in data, data
        assert_beeline_runs_as("alice", discovery_url(zookeeper.address, "krb"), env=kdc.java_env(tickets["alice"]))
    finally:
        running.stop()
        kill_engines_on(str(tmp_path / "work"))


def test_under_tls_sasl_gssapi_runs_inside_it(gateway_binary, kdc, tickets, tmp_path):  # noqa: F811
    """QOP auth protects only the login; TLS protects the rest, with GSSAPI inside it."""
    certificate = make_certificate(tmp_path / "tls", "kumiho")
    running = start_gateway(gateway_binary, tmp_path / "work", default_cluster_dir(tmp_path),
                            *kerberos_flags(kdc.directory / "kumiho.keytab"),
                            "--ssl-cert-file", str(certificate.cert), "--ssl-key-file", str(certificate.key),
                            env=kdc.env())
    try:
        tls = f";ssl=true;sslTrustStore={certificate.truststore};trustStorePassword={TRUSTSTORE_PASSWORD}"
        assert_beeline_runs_as("alice", binary_url(running) + tls, env=kdc.java_env(tickets["alice"]))
    finally:
        running.stop()
        kill_engines_on(str(tmp_path / "work"))


# Kerberos and passwords both: carol has a password in the file and no principal.
CAROL_PASSWORD = "carol-File-Passw0rd"


@pytest.fixture(scope="module")
def both(gateway_binary, kdc, tmp_path_factory):  # noqa: F811
    """A gateway taking tickets and passwords (`KERBEROS,FILE`, written in the other order),
    registered for ZooKeeper discovery under `/both` in a ZooKeeper of its own
    (`both.zookeeper`)."""
    from harness.zookeeper import start_zookeeper

    root = tmp_path_factory.mktemp("kerberos-and-passwords")
    password_file = root / "passwords"
    htpasswd(password_file, "carol", CAROL_PASSWORD, create=True)
    ensemble = start_zookeeper(root)
    try:
        running = start_gateway(gateway_binary, root / "work", default_cluster_dir(root),
                                *kerberos_flags(kdc.directory / "kumiho.keytab", "FILE,KERBEROS"), *SPNEGO_FLAGS,
                                "--password-file", str(password_file), *ha_flags(ensemble.address, "both"),
                                env=kdc.env())
    except Exception:
        ensemble.stop()
        raise
    running.zookeeper = ensemble
    yield running
    running.stop()
    kill_engines_on(str(root / "work"))
    ensemble.stop()


@pytest.mark.parametrize("transport", ["binary", "http"])
def test_with_passwords_too_beeline_connects_with_a_ticket_or_a_password(both, kdc, tickets, transport):
    """Hive JDBC picks GSSAPI (SPNEGO over HTTP) when the URL names a principal, PLAIN (Basic)
    when it does not: the same gateway takes both, each as its own user."""
    if transport == "binary":
        ticket_url = binary_url(both)
        password_url = f"jdbc:hive2://{HOST_NAME}:{both.port}/default"
    else:
        password_url = http_url(both.http_port).replace("127.0.0.1", HOST_NAME)
        ticket_url = f"{password_url};principal={PRINCIPAL}"
    assert_beeline_runs_as("alice", ticket_url, env=kdc.java_env(tickets["alice"]))
    assert_beeline_runs_as("carol", password_url, user="carol", password=CAROL_PASSWORD)


def test_with_passwords_too_pyhive_connects_either_way_and_wrong_passwords_and_nosasl_are_refused(
        both, kdc, tickets, monkeypatch):
    with pyhive_connect(both, monkeypatch, kdc, tickets["bob"]) as connection:
        assert current_user_and_answer(connection) == [("bob", 42)]
    with hive.connect(both, "sasl", user="carol", password=CAROL_PASSWORD) as connection:
        assert current_user_and_answer(connection) == [("carol", 42)]
    # A principal's name is no password user: alice has no line in the file.
    for user, password in [("carol", "not-" + CAROL_PASSWORD), ("alice", ALICE_PASSWORD)]:
        with pytest.raises(Exception, match=REFUSED):
            hive.connect(both, "sasl", user=user, password=password)
    with pytest.raises(Exception) as refused:
        with hive.connect(both, "nosasl", user="carol") as connection:
            hive.query(connection, "SELECT 1")
    assert "a Kerberos ticket or a user and password" in str(refused.value), refused.value


def test_with_passwords_too_rest_takes_negotiate_or_basic_and_challenges_with_both(both, kdc, tickets):
    batches = f"http://{HOST_NAME}:{both.rest_port}/api/v1/batches"
    answered = curl_negotiate(kdc, tickets["alice"], batches)
    body, status = answered.stdout.rsplit("\n", 1)
    assert status == "200" and '"batches":[]' in body, answered
    basic = subprocess.run(["curl", "-s", "-u", f"carol:{CAROL_PASSWORD}", "-w", "\\n%{http_code}", batches],
                           capture_output=True, text=True, timeout=60)
    body, status = basic.stdout.rsplit("\n", 1)
    assert status == "200" and '"batches":[]' in body, basic
    wrong = requests.get(batches, auth=("carol", "not-" + CAROL_PASSWORD), timeout=30)
    assert wrong.status_code == 401 and REFUSED in wrong.text, wrong.text
    # No credentials: one challenge per scheme, each its own header, so that a client picks its own.
    for url in (batches, f"http://{HOST_NAME}:{both.http_port}/cliservice"):
        bare = requests.post(url, timeout=30) if url.endswith("cliservice") else requests.get(url, timeout=30)
        assert bare.status_code == 401, bare.text
        assert bare.raw.headers.getlist("WWW-Authenticate") == ["Negotiate", 'Basic realm="kumiho"'], bare.headers
        assert "--negotiate" in bare.text and "curl -u user:password" in bare.text, bare.text


def test_with_passwords_too_discovery_advertises_the_list_without_the_principal(both, kdc, tickets):
    """As Kyuubi: `KERBEROS,CUSTOM` and no principal, which Hive JDBC would take as an order
    to use Kerberos. A discovery URL without `principal=` connects with a password; a
    Kerberos client names the principal in its own URL."""
    [node] = both.zookeeper.children("/both")
    data = both.zookeeper.get(f"/both/{node}").decode()
    assert ";hive.server2.authentication=KERBEROS,CUSTOM" in data and "principal" not in data, data
    url = discovery_url(both.zookeeper.address, "both")
    assert_beeline_runs_as("carol", url, user="carol", password=CAROL_PASSWORD)
    assert_beeline_runs_as("alice", f"{url};principal={PRINCIPAL}", env=kdc.java_env(tickets["alice"]))


def test_with_ldap_beeline_brings_a_ticket_and_pyhive_a_directory_password(gateway_binary, kdc, tickets,  # noqa: F811
                                                                          tmp_path):
    """KERBEROS,LDAP with a real KDC and a real slapd on one gateway: beeline logs in with a
    ticket, PyHive with carol's password in the directory, each as their own user; a wrong
    password is refused."""
    directory = start_slapd(tmp_path / "slapd", {"carol": CAROL_PASSWORD})
    try:
        running = start_gateway(gateway_binary, tmp_path / "work", default_cluster_dir(tmp_path),
                                *kerberos_flags(kdc.directory / "kumiho.keytab", "KERBEROS,LDAP"),
                                "--ldap-url", directory.url, "--ldap-user-dn-pattern", f"uid=%s,{PEOPLE_DN}",
                                env=kdc.env())
        try:
            assert_beeline_runs_as("alice", binary_url(running), env=kdc.java_env(tickets["alice"]))
            with hive.connect(running, "sasl", user="carol", password=CAROL_PASSWORD) as connection:
                assert current_user_and_answer(connection) == [("carol", 42)]
            with pytest.raises(Exception, match=REFUSED):
                hive.connect(running, "sasl", user="carol", password="not-" + CAROL_PASSWORD)
        finally:
            running.stop()
            kill_engines_on(str(tmp_path / "work"))
    finally:
        directory.stop()


# Security layers and auth_to_local rules: a gateway requiring QOP auth-int (a client asking
# for auth-conf gets it) whose rules map etl/batchhost to `etl_batchhost` and a one-component
# principal of the realm to its name, and map nothing else (no DEFAULT): bob/analyst is refused.
ESCAPED_REALM = REALM.replace(".", r"\.")
AUTH_TO_LOCAL = (f"RULE:[2:$1_$2@$0](etl_.*@{ESCAPED_REALM})s/@.*//\n"
                 f"RULE:[1:$1@$0](.*@{ESCAPED_REALM})s/@.*//")
# Text that appears in the statement and in its result.
MARKER = "kumiho-wire-marker"


@pytest.fixture(scope="module")
def protected(gateway_binary, kdc, tmp_path_factory):  # noqa: F811
    root = tmp_path_factory.mktemp("kerberos-protected")
    running = start_gateway(gateway_binary, root / "work", default_cluster_dir(root),
                            *kerberos_flags(kdc.directory / "kumiho.keytab"), "--kerberos-sasl-qop", "auth-int",
                            "--kerberos-auth-to-local", AUTH_TO_LOCAL, env=kdc.env())
    yield running
    running.stop()
    kill_engines_on(str(root / "work"))


@pytest.mark.parametrize("qop, ticket, user, in_clear", [
    ("auth-conf", "etl", "etl_batchhost", False),
    ("auth-int", "alice", "alice", True),
])
def test_security_layers_sign_or_encrypt_every_frame(protected, kdc, tickets, qop, ticket, user, in_clear):
    """Through a relay that records the bytes: under auth-conf neither the statement nor its
    result crosses in clear; under auth-int (signed, not encrypted) both do, which shows that
    the relay sees them. The session user is the rules' (etl/batchhost is etl_batchhost). A
    statement and a reply larger than Java's 64 KiB SASL buffer cross too (the reply cut into
    tokens that fit it)."""
    statements = [f"SELECT current_user() AS who, '{MARKER}' AS marker",
                  f"SELECT length('{'y' * 70000}') AS n, repeat('ab', 50000) AS big"]
    with Relay(protected.port) as relay:
        run = run_beeline(f"jdbc:hive2://{HOST_NAME}:{relay.port}/default;principal={PRINCIPAL};saslQop={qop}",
                          statements, env=kdc.java_env(tickets[ticket]))
    assert run.returncode == 0, run.describe()
    assert run.result_sets() == [[["who", "marker"], [user, MARKER]], [["n", "big"], ["70000", "ab" * 50000]]], \
        run.describe()[:4000]
    sent, received = relay.recorded()
    assert sent and received
    assert (MARKER.encode() in sent, MARKER.encode() in received) == (in_clear, in_clear), qop


def test_a_client_below_the_qop_or_without_a_rule_is_refused_with_what_to_do(protected, kdc, tickets):
    # Hive JDBC told to use QOP auth (without saslQop it takes the strongest layer offered)
    # finds it not offered and says so.
    before = len(protected.log())
    run = run_beeline(binary_url(protected) + ";saslQop=auth", ["SELECT 1"], env=kdc.java_env(tickets["alice"]))
    assert run.returncode != 0 and "No common protection layer" in run.stdout + run.stderr, run.describe()
    logged = protected.wait_for_log(r"SASL authentication refused[^\n]*No common protection layer[^\n]*",
                                    after=before)
    assert "this server offers QOP auth-int or auth-conf" in logged and "saslQop=auth-int" in logged, logged
    # No rule maps bob/analyst, on the binary port nor over HTTP.
    refusal = f"no auth_to_local rule maps Kerberos principal bob/analyst@{REALM}"
    run = run_beeline(binary_url(protected) + ";saslQop=auth-conf", ["SELECT 1"], env=kdc.java_env(tickets["bob"]))
    assert run.returncode != 0 and refusal in run.stdout + run.stderr, run.describe()
    batches = f"http://{HOST_NAME}:{protected.rest_port}/api/v1/batches"
    body, status = curl_negotiate(kdc, tickets["bob"], batches).stdout.rsplit("\n", 1)
    assert status == "401" and refusal in body, body
    body, status = curl_negotiate(kdc, tickets["etl"], batches).stdout.rsplit("\n", 1)
    assert status == "200", body
