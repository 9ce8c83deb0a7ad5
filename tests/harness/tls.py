"""Self-signed certificates for tests of TLS: what an operator does for a test deployment,
`openssl req -x509` for the gateway's address, then `keytool -importcert` for the JKS trust
store Hive JDBC reads."""

import subprocess
from dataclasses import dataclass
from pathlib import Path

from harness.engine import HOST

TRUSTSTORE_PASSWORD = "changeit"


@dataclass
class Certificate:
    """A self-signed certificate, its key, and a JKS trust store holding the certificate."""

    cert: Path
    key: Path
    truststore: Path


def make_certificate(directory: Path, name: str) -> Certificate:
    """What an operator does for a test deployment: a self-signed certificate for the
    gateway's address (an IP SAN: Hive JDBC's HTTPS client checks the host name), then a
    trust store for Java clients."""
    directory.mkdir(parents=True, exist_ok=True)
    cert, key, truststore = directory / f"{name}.pem", directory / f"{name}-key.pem", directory / f"{name}.jks"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", f"/CN={name}",
                    "-addext", f"subjectAltName=IP:{HOST},DNS:localhost"],
                   check=True, capture_output=True)
    subprocess.run(["keytool", "-importcert", "-noprompt", "-alias", name, "-file", str(cert),
                    "-keystore", str(truststore), "-storetype", "JKS", "-storepass", TRUSTSTORE_PASSWORD],
                   check=True, capture_output=True)
    return Certificate(cert, key, truststore)
