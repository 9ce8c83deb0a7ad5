"""Runs an OpenLDAP server (Debian's `slapd`) on a free loopback port, with users to bind as,
groups and a service account to search as.

    directory = start_slapd(tmp_path, {"alice": "alice-pw", "bob": "bob-pw"},
                            groups={"analysts": ["alice"]}, service_password="svc-pw")
    directory.url                       # "ldap://127.0.0.1:PORT"
    directory.user_dn("alice")          # "uid=alice,ou=people,dc=example,dc=com"
    directory.group_dn("analysts")      # "cn=analysts,ou=groups,dc=example,dc=com"
    SERVICE_DN                          # "cn=kumiho,ou=services,dc=example,dc=com"
    directory.stop()

With `tls=(certificate_file, key_file)` (PEM) slapd also serves `ldaps://` on a second port
(`directory.ldaps_url`) and StartTLS on the first, and refuses any simple bind with a
password that does not travel under TLS (`security simple_bind=`): a client that logs in
there has used TLS.

A group is a `groupOfNames` listing its members' DNs under `member`; each member's entry
also lists the group's DN under `seeAlso`, a DN attribute every `person` may hold, which
stands in for Active Directory's `memberOf` (`ldap-user-membership-key`). The service
account is a `simpleSecurityObject`, which no search for people finds. `extra_ldif` adds
entries as they are written.

Its configuration is a `slapd.conf` of its own (`slapd -f`), its data an mdb database in the
given directory, loaded with `slapadd` before the start; the users' passwords are stored
salted and hashed ({SSHA}), as `slappasswd` writes them.
"""

import base64
import hashlib
import os
import subprocess
import time
from pathlib import Path

from harness.engine import stop_process
from harness.zookeeper import HOST, free_port

SLAPD = Path("/usr/sbin/slapd")
SLAPADD = Path("/usr/sbin/slapadd")
SCHEMA_DIR = Path("/etc/ldap/schema")
MODULE_DIR = Path("/usr/lib/ldap")
BASE_DN = "dc=example,dc=com"
PEOPLE_DN = f"ou=people,{BASE_DN}"
GROUPS_DN = f"ou=groups,{BASE_DN}"
SERVICE_DN = f"cn=kumiho,ou=services,{BASE_DN}"
# slapd answers within a fraction of a second; this bounds a broken start.
READY_TIMEOUT_S = 30


def ssha(password: str) -> str:
    """A salted SHA-1 userPassword, as `slappasswd -h {SSHA}` makes it."""
    salt = os.urandom(8)
    digest = hashlib.sha1(password.encode() + salt).digest()
    return "{SSHA}" + base64.b64encode(digest + salt).decode()


class Slapd:
    """One slapd with its own directory, port and users."""

    def __init__(self, directory: Path, port: int, process: subprocess.Popen, ldaps_port: int | None = None):
        self.directory = directory
        self.port = port
        self.process = process
        self.ldaps_port = ldaps_port

    @property
    def url(self) -> str:
        return f"ldap://{HOST}:{self.port}"

    @property
    def ldaps_url(self) -> str:
        assert self.ldaps_port is not None, "slapd was started without tls"
        return f"ldaps://{HOST}:{self.ldaps_port}"

    @staticmethod
    def user_dn(user: str) -> str:
        return f"uid={user},{PEOPLE_DN}"

    @staticmethod
    def group_dn(group: str) -> str:
        return f"cn={group},{GROUPS_DN}"

    def log(self) -> str:
        return (self.directory / "slapd.log").read_text(errors="replace")

    def stop(self):
        stop_process(self.process)


def _config(directory: Path, tls: tuple[Path, Path] | None) -> str:
    schemas = "\n".join(f"include {SCHEMA_DIR / name}.schema" for name in ("core", "cosine", "inetorgperson"))
    # A TLS session's strength factor is its cipher's key size (128 or 256); a bind in clear
    # has none and gets confidentialityRequired.
    tls_lines = (f"TLSCertificateFile {tls[0]}\nTLSCertificateKeyFile {tls[1]}\nsecurity simple_bind=128\n"
                 if tls else "")
    return f"""{schemas}
{tls_lines}modulepath {MODULE_DIR}
moduleload back_mdb
pidfile {directory}/slapd.pid
argsfile {directory}/slapd.args

database mdb
maxsize 16777216
suffix "{BASE_DN}"
rootdn "cn=admin,{BASE_DN}"
directory {directory}/data
access to attrs=userPassword by anonymous auth by self write by * none
access to * by * read
"""


def _entries(users: dict[str, str], groups: dict[str, list[str]], service_password: str | None,
             extra_ldif: list[str]) -> str:
    ldif = [
        f"dn: {BASE_DN}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n",
        f"dn: {PEOPLE_DN}\nobjectClass: organizationalUnit\nou: people\n",
    ]
    for user, password in users.items():
        see_also = "".join(f"seeAlso: {Slapd.group_dn(group)}\n"
                           for group, members in groups.items() if user in members)
        ldif.append(
            f"dn: {Slapd.user_dn(user)}\nobjectClass: inetOrgPerson\nuid: {user}\ncn: {user}\nsn: {user}\n"
            f"userPassword: {ssha(password)}\n{see_also}"
        )
    if groups:
        ldif.append(f"dn: {GROUPS_DN}\nobjectClass: organizationalUnit\nou: groups\n")
    for group, members in groups.items():
        listed = "".join(f"member: {Slapd.user_dn(member)}\n" for member in members)
        ldif.append(f"dn: {Slapd.group_dn(group)}\nobjectClass: groupOfNames\ncn: {group}\n{listed}")
    if service_password is not None:
        ldif.append(f"dn: {SERVICE_DN.split(',', 1)[1]}\nobjectClass: organizationalUnit\nou: services\n")
        ldif.append(f"dn: {SERVICE_DN}\nobjectClass: organizationalRole\nobjectClass: simpleSecurityObject\n"
                    f"cn: kumiho\nuserPassword: {ssha(service_password)}\n")
    ldif.extend(extra_ldif)
    return "\n".join(ldif)


def _answers(port: int) -> bool:
    """Whether slapd takes an anonymous bind (the LDAP "who am I" of its root DSE)."""
    run = subprocess.run(["ldapwhoami", "-x", "-H", f"ldap://{HOST}:{port}"], capture_output=True,
                         stdin=subprocess.DEVNULL, timeout=10)
    return run.returncode == 0


def start_slapd(directory: Path, users: dict[str, str], groups: dict[str, list[str]] | None = None,
                service_password: str | None = None, extra_ldif: list[str] | None = None,
                tls: tuple[Path, Path] | None = None) -> Slapd:
    """Writes the config and the entries, starts slapd on a free port; returns once it answers."""
    for tool in (SLAPD, SLAPADD):
        if not tool.is_file():
            raise RuntimeError(f"{tool} is missing: install Debian's slapd and ldap-utils (scripts/setup.sh)")
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "data").mkdir(exist_ok=True)
    config = directory / "slapd.conf"
    config.write_text(_config(directory, tls))
    entries = directory / "users.ldif"
    entries.write_text(_entries(users, groups or {}, service_password, extra_ldif or []))
    subprocess.run([str(SLAPADD), "-f", str(config), "-l", str(entries)], check=True, capture_output=True)
    port = free_port()
    ldaps_port = free_port() if tls else None
    listeners = f"ldap://{HOST}:{port}/" + (f" ldaps://{HOST}:{ldaps_port}/" if tls else "")
    log = open(directory / "slapd.log", "wb")
    # `-d 0`: in the foreground, so that the process is slapd itself, with no debug output.
    process = subprocess.Popen([str(SLAPD), "-d", "0", "-f", str(config), "-h", listeners],
                               stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    slapd = Slapd(directory, port, process, ldaps_port)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not _answers(port):
        if process.poll() is not None or time.monotonic() > deadline:
            slapd.stop()
            raise RuntimeError(f"slapd did not start on port {port}; its log:\n{slapd.log()[-4000:]}")
        time.sleep(0.05)
    return slapd
