"""TLS on the gateway's frontends (`--ssl-cert-file`, `--ssl-key-file`): beeline (Hive JDBC) over
the binary port with `ssl=true;sslTrustStore=...` and over HTTPS, and through ZooKeeper
discovery, which tells it to use TLS; impyla with `use_ssl=True`; REST over HTTPS. A plaintext
client on a TLS port, or one that does not trust the certificate, is refused on its own while
the others keep working. A missing or mismatched certificate or key stops the start, naming
the file. Passwords are checked (authentication FILE): they now travel encrypted.

The certificate is made by harness/tls.py, self-signed for 127.0.0.1, with `openssl req -x509`; Java's
`keytool -importcert` makes the JKS trust store Hive JDBC reads.
"""

import shutil
import socket
import subprocess
from pathlib import Path

import pytest
import requests
from impala.dbapi import connect as impyla_connect

from gateway_fixtures import DEFAULT_CLUSTER, discovery_url, ha_flags, kill_engines_on, start_gateway, start_kumiho  # noqa: F401
from gateway_fixtures import gateway_binary, gateway_dirs  # noqa: F401 (fixtures)
from harness import hive
from harness.beeline import run_beeline
from harness.engine import HOST
from harness.tls import TRUSTSTORE_PASSWORD, make_certificate

PASSWORD = "alice-Passw0rd"
NAMESPACE = "kumiho_tls"


@pytest.fixture(scope="module")
def certificates(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tls")
    return make_certificate(directory, "kumiho"), make_certificate(directory, "impostor")


@pytest.fixture(scope="module")
def zookeeper_server(tmp_path_factory):
    from harness.zookeeper import start_zookeeper

    server = start_zookeeper(tmp_path_factory.mktemp("zk"))
    yield server
    kill_engines_on(server.address)
    server.stop()


@pytest.fixture(scope="module")
def gateway(gateway_binary, tmp_path_factory, certificates, zookeeper_server):  # noqa: F811
    certificate, _ = certificates
    root = tmp_path_factory.mktemp("gateway")
    cluster_dir = root / "cluster-configs"
    cluster_dir.mkdir()
    (cluster_dir / "default.yaml").write_text(DEFAULT_CLUSTER)
    password_file = root / "passwords"
    subprocess.run(["htpasswd", "-iBc", "-C", "10", str(password_file), "alice"], input=PASSWORD, text=True,
                   check=True, capture_output=True)
    running = start_gateway(gateway_binary, root / "work", cluster_dir,
                            "--authentication", "FILE", "--password-file", str(password_file),
                            "--ssl-cert-file", str(certificate.cert), "--ssl-key-file", str(certificate.key),
                            *ha_flags(zookeeper_server.address, NAMESPACE))
    yield running
    running.stop()
    kill_engines_on(str(root / "work"))


def jdbc_tls(port: int, truststore: Path, options: str = "") -> str:
    return (f"jdbc:hive2://{HOST}:{port}/default;ssl=true;sslTrustStore={truststore};"
            f"trustStorePassword={TRUSTSTORE_PASSWORD}{options}")


def test_beeline_over_tls_on_the_binary_port_and_over_https(gateway, certificates):
    certificate, _ = certificates
    for url in [jdbc_tls(gateway.port, certificate.truststore),
                jdbc_tls(gateway.http_port, certificate.truststore, ";transportMode=http;httpPath=cliservice")]:
        run = run_beeline(url, ["SELECT 'sealed' AS how"], password=PASSWORD)
        assert run.returncode == 0, run.describe()
        assert run.result_sets() == [[["how"], ["sealed"]]], run.describe()


def test_zookeeper_discovery_tells_hive_jdbc_to_use_tls(gateway, certificates, zookeeper_server):
    certificate, _ = certificates
    [node] = zookeeper_server.children(f"/{NAMESPACE}")
    data = dict(pair.split("=", 1) for pair in zookeeper_server.get(f"/{NAMESPACE}/{node}").decode().split(";"))
    assert data["hive.server2.use.SSL"] == "true", data
    assert int(data["hive.server2.thrift.port"]) == gateway.port
    # No `ssl=true` in the URL: the registration says it; the trust store is the client's.
    url = (discovery_url(zookeeper_server.address, NAMESPACE)
           + f";sslTrustStore={certificate.truststore};trustStorePassword={TRUSTSTORE_PASSWORD}")
    run = run_beeline(url, ["SELECT 'discovered' AS how"], password=PASSWORD)
    assert run.returncode == 0, run.describe()
    assert run.result_sets() == [[["how"], ["discovered"]]], run.describe()


@pytest.mark.parametrize("transport", ["binary", "http"])
def test_impyla_with_use_ssl(gateway, certificates, transport):
    certificate, _ = certificates
    options = {"use_http_transport": True, "http_path": "cliservice"} if transport == "http" else {}
    port = gateway.http_port if transport == "http" else gateway.port
    connection = impyla_connect(host=HOST, port=port, auth_mechanism="PLAIN", user="alice", password=PASSWORD,
                                use_ssl=True, ca_cert=str(certificate.cert), **options)
    try:
        cursor = connection.cursor()
        cursor.execute("SELECT 40 + 2 AS answer")
        assert cursor.fetchall() == [(42,)]
        cursor.close()
    finally:
        connection.close()


def test_plaintext_clients_are_refused_alone_and_tls_clients_keep_working(gateway, certificates):
    certificate, _ = certificates
    live = impyla_connect(host=HOST, port=gateway.port, auth_mechanism="PLAIN", user="alice", password=PASSWORD,
                          use_ssl=True, ca_cert=str(certificate.cert))
    cursor = live.cursor()
    cursor.execute("SELECT 1 AS before")
    assert cursor.fetchall() == [(1,)]
    after = len(gateway.log())

    # beeline without ssl=true: told why, by a SASL ERROR frame.
    run = run_beeline(f"jdbc:hive2://{HOST}:{gateway.port}/default", ["SELECT 1"], password=PASSWORD)
    assert run.returncode != 0, run.describe()
    assert "requires TLS" in run.stdout + run.stderr, run.describe()
    # PyHive in plaintext, SASL and NOSASL.
    with pytest.raises(Exception):
        hive.query(hive.connect(gateway, "sasl", password=PASSWORD), "SELECT 1")
    with pytest.raises(Exception):
        hive.query(hive.connect(gateway, "nosasl"), "SELECT 1")
    # Plain HTTP on the HTTPS ports: a 400 saying so.
    for port in (gateway.http_port, gateway.rest_port):
        answer = requests.post(f"http://{HOST}:{port}/cliservice", data=b"\x80\x01", timeout=10)
        assert answer.status_code == 400 and "speaks HTTPS" in answer.text, answer.text
    # Bytes of no protocol, then a hang-up mid-handshake: nothing to answer, nothing kept.
    with socket.create_connection((HOST, gateway.port)) as junk:
        junk.sendall(b"\x16\x03\x01\xff\xff" + b"\0" * 16)

    cursor.execute("SELECT 2 AS after")
    assert cursor.fetchall() == [(2,)]
    cursor.close()
    live.close()
    log = gateway.log()[after:]
    assert "a plaintext client on a TLS port" in log, log
    assert gateway.process.poll() is None
    assert PASSWORD not in gateway.log()


def test_a_client_that_does_not_trust_the_certificate_is_refused(gateway, certificates):
    certificate, impostor = certificates
    after = len(gateway.log())
    run = run_beeline(jdbc_tls(gateway.port, impostor.truststore), ["SELECT 1"], password=PASSWORD)
    assert run.returncode != 0, run.describe()
    assert "certification path" in run.stdout + run.stderr or "PKIX" in run.stdout + run.stderr, run.describe()
    # impyla (thrift's TSSLSocket) reports only "Could not connect"; the gateway's log says why.
    with pytest.raises(Exception):
        impyla_connect(host=HOST, port=gateway.port, auth_mechanism="PLAIN", user="alice", password=PASSWORD,
                       use_ssl=True, ca_cert=str(impostor.cert)).cursor()
    assert "TLS handshake failed" in gateway.wait_for_log("TLS handshake failed", after=after)
    connection = impyla_connect(host=HOST, port=gateway.port, auth_mechanism="PLAIN", user="alice",
                                password=PASSWORD, use_ssl=True, ca_cert=str(certificate.cert))
    connection.cursor().close()
    connection.close()


def test_rest_is_served_over_https_with_the_password_checked(gateway, certificates):
    certificate, _ = certificates
    url = f"https://{HOST}:{gateway.rest_port}/api/v1/batches"
    listed = requests.get(url, auth=("alice", PASSWORD), verify=str(certificate.cert), timeout=30)
    assert listed.status_code == 200, listed.text
    refused = requests.get(url, auth=("alice", "wrong"), verify=str(certificate.cert), timeout=30)
    assert refused.status_code == 401


def test_start_refuses_a_missing_or_mismatched_key_naming_the_file(gateway_binary, tmp_path, certificates):  # noqa: F811
    certificate, impostor = certificates
    missing = tmp_path / "absent-key.pem"
    unreadable = tmp_path / "unreadable-key.pem"
    shutil.copy(certificate.key, unreadable)
    unreadable.chmod(0)
    cases = [
        (certificate.cert, missing, ["key file", str(missing), "does not exist"]),
        (certificate.cert, impostor.key, ["key file", str(impostor.key), "is not the private key",
                                          str(certificate.cert)]),
        (certificate.key, certificate.key, ["certificate file", "holds no PEM certificate"]),
    ]
    if subprocess.run(["id", "-u"], capture_output=True, text=True).stdout.strip() != "0":
        cases.append((certificate.cert, unreadable, ["key file", "permission denied"]))
    for cert, key, expected in cases:
        started = subprocess.run(
            [str(gateway_binary), "--bind-host", HOST, "--binary-port", "0", "--http-port", "0",
             "--metrics-enabled", "false", "--rest-enabled", "false", "--work-dir", str(tmp_path / "work"),
             "--cluster-configs", str(tmp_path), "--ssl-cert-file", str(cert), "--ssl-key-file", str(key)],
            capture_output=True, text=True, timeout=30)
        assert started.returncode != 0, started
        for words in expected:
            assert words in started.stderr, started.stderr
        assert "ssl-cert-file" in started.stderr, started.stderr
        for secret in (impostor.key, certificate.key):
            body = secret.read_text().splitlines()[1]
            assert body not in started.stderr, "key material in the error"


def test_a_kyuubi_keystore_converted_as_the_readme_says_serves_tls(gateway_binary, start_kumiho, tmp_path):  # noqa: F811
    """Kyuubi takes a Java keystore (kyuubi.frontend.ssl.keystore.*); README's recipe turns one
    into the PEM files the gateway takes."""
    keystore, p12, chain, key = (tmp_path / name for name in ("kyuubi.jks", "kyuubi.p12", "chain.pem", "key.pem"))
    password = "keystore-pass"
    subprocess.run(["keytool", "-genkeypair", "-alias", "kyuubi", "-keyalg", "EC", "-groupname", "secp256r1",
                    "-dname", "CN=localhost", "-ext", f"san=ip:{HOST}", "-validity", "2", "-keystore", str(keystore),
                    "-storetype", "JKS", "-storepass", password, "-keypass", password], check=True, capture_output=True)
    # The README's commands.
    subprocess.run(["keytool", "-importkeystore", "-srckeystore", str(keystore), "-srcstorepass", password,
                    "-destkeystore", str(p12), "-deststoretype", "PKCS12", "-deststorepass", password],
                   check=True, capture_output=True)
    for flags, mode in ((["-clcerts", "-nokeys"], "w"), (["-cacerts", "-nokeys"], "a"), (["-nocerts", "-nodes"], "w")):
        out = chain if "-nokeys" in flags else key
        pem = subprocess.run(["openssl", "pkcs12", "-in", str(p12), "-passin", f"pass:{password}", *flags],
                             check=True, capture_output=True).stdout
        with open(out, mode + "b") as file:
            file.write(pem)
    # Refused as it is: Java leaves an EC key's public key out, and the gateway says what to run.
    refused = subprocess.run(
        [str(gateway_binary), "--bind-host", HOST, "--binary-port", "0", "--http-port", "0",
         "--metrics-enabled", "false", "--rest-enabled", "false", "--work-dir", str(tmp_path / "work"),
         "--cluster-configs", str(tmp_path), "--ssl-cert-file", str(chain), "--ssl-key-file", str(key)],
        capture_output=True, text=True, timeout=30)
    assert refused.returncode != 0 and "openssl ec -in KEY -out KEY" in refused.stderr, refused.stderr
    subprocess.run(["openssl", "ec", "-in", str(key), "-out", str(key)], check=True, capture_output=True)
    gateway = start_kumiho("--ssl-cert-file", str(chain), "--ssl-key-file", str(key))
    connection = impyla_connect(host=HOST, port=gateway.port, auth_mechanism="PLAIN", user="alice", password="x",
                                use_ssl=True, ca_cert=str(chain))
    try:
        cursor = connection.cursor()
        cursor.execute("SELECT 'converted' AS how")
        assert cursor.fetchall() == [("converted",)]
        cursor.close()
    finally:
        connection.close()
