"""Runs an MIT Kerberos KDC (Debian's krb5-kdc) on a free loopback port, in a realm of its
own, with principals, keytabs and ticket caches for the tests.

    kdc = start_kdc(tmp_path)
    kdc.add_principal("alice", password="alice-pw")     # a user
    kdc.add_principal("kumiho/localhost")               # a service: a random key
    kdc.export_keytab("kumiho/localhost", tmp_path / "kumiho.keytab")
    cache = kdc.kinit("alice", "alice-pw", tmp_path / "alice.ccache")
    subprocess.run([...], env=kdc.env(cache))           # KRB5_CONFIG, KRB5CCNAME
    run_beeline(url, [...], env=kdc.java_env(cache))    # and Hadoop's UGI in Kerberos mode
    kdc.stop()

Everything lives in the given directory: the database, its stash, `kdc.conf` (found
through `KRB5_KDC_PROFILE`) and the `krb5.conf` that the KDC tools, the gateway and the
clients read (`KRB5_CONFIG`; Java's `-Djava.security.krb5.conf`). The KDC listens on one
port for UDP and TCP; clients are told to use TCP, which is also what the readiness check
connects to. Host names are taken as written (no DNS canonicalisation, no reverse lookup),
so that a ticket for `kumiho/localhost` is asked for exactly that principal.
"""

import os
import socket
import subprocess
import time
from pathlib import Path

from harness.engine import stop_process
from harness.zookeeper import HOST, free_port

KRB5KDC = Path("/usr/sbin/krb5kdc")
KDB5_UTIL = Path("/usr/sbin/kdb5_util")
KADMIN_LOCAL = Path("/usr/sbin/kadmin.local")
KINIT = Path("/usr/bin/kinit")
REALM = "KUMIHO.TEST"
# The KDC answers within a fraction of a second; this bounds a broken start.
READY_TIMEOUT_S = 30


class Kdc:
    """One KDC with its own realm database, port and configuration."""

    def __init__(self, directory: Path, port: int, process: subprocess.Popen):
        self.directory = directory
        self.port = port
        self.process = process
        self.krb5_conf = directory / "krb5.conf"
        self.kdc_conf = directory / "kdc.conf"

    def principal(self, name: str) -> str:
        return f"{name}@{REALM}"

    def env(self, ccache: Path | None = None) -> dict:
        """The environment of a program that uses this realm (and `ccache`, if given)."""
        env = {**os.environ, "KRB5_CONFIG": str(self.krb5_conf), "KRB5_KDC_PROFILE": str(self.kdc_conf)}
        if ccache is None:
            # No ticket: a cache that does not exist, not whatever the machine has.
            env["KRB5CCNAME"] = f"FILE:{self.directory / 'no-such-ccache'}"
        else:
            env["KRB5CCNAME"] = f"FILE:{ccache}"
        return env

    def java_env(self, ccache: Path | None = None) -> dict:
        """`env` for a Hadoop client such as beeline: Hadoop's UGI in Kerberos mode (a
        `core-site.xml` on its classpath through HADOOP_CONF_DIR) and Java's Kerberos reading
        this realm's krb5.conf; the ticket cache comes from KRB5CCNAME, as for C clients."""
        conf_dir = self.directory / "hadoop-conf"
        conf_dir.mkdir(exist_ok=True)
        (conf_dir / "core-site.xml").write_text(
            '<?xml version="1.0"?>\n<configuration>\n'
            "  <property><name>hadoop.security.authentication</name><value>kerberos</value></property>\n"
            "</configuration>\n")
        return {**self.env(ccache), "HADOOP_CONF_DIR": str(conf_dir),
                "JAVA_TOOL_OPTIONS": f"-Djava.security.krb5.conf={self.krb5_conf}"}

    def kadmin(self, query: str) -> str:
        done = subprocess.run([str(KADMIN_LOCAL), "-r", REALM, "-q", query], env=self.env(),
                              capture_output=True, text=True, timeout=30)
        assert done.returncode == 0 and "error" not in done.stderr.lower(), \
            f"kadmin.local -q {query!r}: {done.stdout}{done.stderr}"
        return done.stdout

    def add_principal(self, name: str, password: str | None = None):
        key = f"-pw {password}" if password is not None else "-randkey"
        self.kadmin(f"addprinc {key} {name}")

    def export_keytab(self, name: str, keytab: Path):
        """Writes the principal's current key into `keytab` (without changing the key)."""
        self.kadmin(f"ktadd -k {keytab} -norandkey {name}")

    def kinit(self, name: str, password: str, ccache: Path) -> Path:
        """A ticket cache holding `name`'s TGT; fails the test if the KDC refuses."""
        done = self.try_kinit(name, password, ccache)
        assert done.returncode == 0, f"kinit {name}: {done.stdout}{done.stderr}"
        return ccache

    def try_kinit(self, name: str, password: str, ccache: Path) -> subprocess.CompletedProcess:
        return subprocess.run([str(KINIT), self.principal(name)], input=password + "\n", env=self.env(ccache),
                              capture_output=True, text=True, timeout=30)

    def log(self) -> str:
        path = self.directory / "kdc.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self):
        stop_process(self.process)


def _krb5_conf(port: int) -> str:
    return f"""[libdefaults]
    default_realm = {REALM}
    dns_lookup_realm = false
    dns_lookup_kdc = false
    dns_canonicalize_hostname = false
    rdns = false
    udp_preference_limit = 1
    ticket_lifetime = 1h
    forwardable = true

[realms]
    {REALM} = {{
        kdc = {HOST}:{port}
    }}

[domain_realm]
    localhost = {REALM}
    {HOST} = {REALM}
"""


def _kdc_conf(directory: Path, port: int) -> str:
    return f"""[kdcdefaults]
    kdc_ports = {port}
    kdc_tcp_listen = {HOST}:{port}
    kdc_listen = {HOST}:{port}

[realms]
    {REALM} = {{
        database_name = {directory}/principal
        key_stash_file = {directory}/stash
        acl_file = {directory}/kadm5.acl
        kdc_listen = {HOST}:{port}
        kdc_tcp_listen = {HOST}:{port}
        max_life = 1h
        supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
    }}

[logging]
    kdc = FILE:{directory}/kdc.log
"""


def start_kdc(directory: Path) -> Kdc:
    """Creates the realm's database in `directory` and starts krb5kdc on a free port."""
    directory.mkdir(parents=True, exist_ok=True)
    port = free_port()
    (directory / "krb5.conf").write_text(_krb5_conf(port))
    (directory / "kdc.conf").write_text(_kdc_conf(directory, port))
    (directory / "kadm5.acl").write_text("")
    env = {**os.environ, "KRB5_CONFIG": str(directory / "krb5.conf"),
           "KRB5_KDC_PROFILE": str(directory / "kdc.conf")}
    created = subprocess.run([str(KDB5_UTIL), "create", "-s", "-r", REALM, "-P", "kumiho-test-master-key"],
                             env=env, capture_output=True, text=True, timeout=60)
    assert created.returncode == 0, f"kdb5_util create: {created.stdout}{created.stderr}"
    # -n: stay in the foreground, so that stopping the process stops the KDC.
    process = subprocess.Popen([str(KRB5KDC), "-n", "-r", REALM], env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=open(directory / "krb5kdc.stderr", "w"))
    kdc = Kdc(directory, port, process)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"krb5kdc exited with {process.returncode}: "
                               f"{(directory / 'krb5kdc.stderr').read_text()}{kdc.log()}")
        try:
            with socket.create_connection((HOST, port), timeout=1):
                return kdc
        except OSError:
            if time.monotonic() > deadline:
                kdc.stop()
                raise RuntimeError(f"krb5kdc did not listen on {HOST}:{port}: {kdc.log()}")
            time.sleep(0.05)
