"""Who may open a session, as an operator of Kyuubi sets it with kyuubi.server.limit.connections.*:
a cluster's caps on the sessions open per user and per client address (with users exempt), and
its lists of denied users and addresses, which an administrator's refresh applies at once.

Real clients: PyHive for the caps (their refusal is what its user reads), beeline and a REST
batch for the deny lists. Every client here comes from 127.0.0.1; no engine is needed, since
OpenSession is answered before the launch.
"""

import base64

import pytest
import requests
from pyhive import hive
from thrift.transport import THttpClient

from gateway_fixtures import DEFAULT_CLUSTER, wait_until
from gateway_fixtures import gateway_binary, gateway_dirs, kumiho, start_kumiho  # noqa: F401 (fixtures)
from harness.beeline import binary_url, run_beeline
from harness.engine import HOST
from harness.prometheus import scrape

ADMIN = "adm_ops"


def use_cluster(gateway, text: str):
    """Puts `text` in force as the default cluster, as an operator's edit and refresh would;
    the first time, ADMIN is no super-user yet, and the watcher's reload is waited for."""
    mark = len(gateway.log())
    gateway.write_cluster("default", DEFAULT_CLUSTER + f"super-users: [{ADMIN}]\n" + text)
    answer = requests.post(f"http://{HOST}:{gateway.rest_port}/api/v1/admin/refresh/deny_users",
                           auth=(ADMIN, "x"), timeout=30)
    if answer.status_code == 403:
        gateway.wait_for_log(r"cluster reloaded", after=mark)
        return
    assert answer.status_code == 200 and "successfully" in answer.text, answer.text


def connect(gateway, user: str):
    return hive.connect(HOST, gateway.port, username=user)


def http_connect(gateway, user: str, client_address: str):
    """PyHive over Thrift HTTP through a proxy that writes the client's address in X-Real-IP."""
    transport = THttpClient.THttpClient(f"http://{HOST}:{gateway.http_port}/cliservice")
    transport.setCustomHeaders({"Authorization": "Basic " + base64.b64encode(f"{user}:x".encode()).decode(),
                                "X-Real-IP": client_address})
    return hive.connect(thrift_transport=transport, username=user)


def refusal(gateway, user: str) -> str:
    """What PyHive raises for a session the gateway refuses."""
    with pytest.raises(Exception) as refused:
        connect(gateway, user).close()
    return str(refused.value)


def test_caps_refuse_the_session_past_them_until_a_place_is_free(kumiho):
    use_cluster(kumiho, """limits:
  max-sessions-per-user: 2
  max-sessions-per-ip: 4
  unlimited-users: [adm_etl]
""")
    alice = [connect(kumiho, "adm_alice") for _ in range(2)]
    message = refusal(kumiho, "adm_alice")
    assert "user `adm_alice` already has 2 open sessions, the limit of cluster `default` " \
           "(limits.max-sessions-per-user); close some first" in message, message
    bob = [connect(kumiho, "adm_bob") for _ in range(2)]
    message = refusal(kumiho, "adm_carol")
    assert "client address 127.0.0.1 already has 4 open sessions" in message, message
    assert "limits.max-sessions-per-ip" in message, message
    # A service account is never capped (and its sessions count for the address).
    etl = [connect(kumiho, "adm_etl") for _ in range(3)]

    # Closed sessions give their places back.
    alice.pop().close()
    for connection in etl:
        connection.close()
    alice.append(connect(kumiho, "adm_alice"))
    refusal(kumiho, "adm_carol")

    # So does a client that hangs up without closing: the gateway closes its session.
    bob.pop()._transport.close()

    def carol_gets_in() -> bool:
        try:
            connect(kumiho, "adm_carol").close()
            return True
        except Exception:
            return False
    wait_until(carol_gets_in, "the hung-up session's place is free")
    for connection in alice + bob:
        connection.close()
    # Operators see the caps being hit.
    metrics = scrape(kumiho.metrics_port)
    refused = {reason: metrics.value("kumiho_sessions_refused_total", cluster="default", reason=reason)
               for reason in ("max_sessions_per_user", "max_sessions_per_ip")}
    assert refused["max_sessions_per_user"] == 1 and refused["max_sessions_per_ip"] >= 2, refused


def test_denied_users_and_addresses_are_refused_and_a_refresh_applies_the_lists_at_once(kumiho):
    use_cluster(kumiho, "deny-users: [adm_mallory]\n")
    run = run_beeline(binary_url(kumiho.port), ["SELECT 1"], user="adm_mallory")
    assert run.returncode != 0, run.describe()
    assert "user `adm_mallory` is denied on cluster `default` (its deny-users)" in run.stdout + run.stderr, \
        run.describe()
    # Not through impersonation either, nor by submitting a batch.
    batch = requests.post(f"http://{HOST}:{kumiho.rest_port}/api/v1/batches", auth=("adm_mallory", "x"),
                          json={"batchType": "PYSPARK", "resource": "/jobs/x.py"}, timeout=30)
    assert batch.status_code == 403 and "is denied on cluster `default`" in batch.text, batch.text
    message = refusal_as(kumiho, ADMIN, proxy="adm_mallory")
    assert "user `adm_mallory` is denied" in message, message
    connect(kumiho, "adm_alice").close()

    use_cluster(kumiho, "deny-ips: ['127.0.0.0/8']\n")
    message = refusal(kumiho, "adm_alice")
    assert "sessions from 127.0.0.1 are denied on cluster `default` (its deny-ips, which has 127.0.0.0/8)" \
        in message, message
    # Unless the operator names a client address header, the header is nobody's word.
    with pytest.raises(Exception, match="sessions from 127.0.0.1 are denied"):
        http_connect(kumiho, "adm_alice", "10.1.2.3")

    use_cluster(kumiho, "")
    connect(kumiho, "adm_mallory").close()


def refusal_as(gateway, user: str, proxy: str) -> str:
    with pytest.raises(Exception) as refused:
        hive.connect(HOST, gateway.port, username=user,
                     configuration={"hive.server2.proxy.user": proxy}).close()
    return str(refused.value)


def test_behind_a_proxy_the_address_it_records_is_the_one_listed_counted_and_denied(start_kumiho):
    gateway = start_kumiho("--client-ip-header", "X-Real-IP")
    use_cluster(gateway, "deny-ips: [10.9.9.9]\nlimits: {max-sessions-per-ip: 1}\n")
    with pytest.raises(Exception, match=r"sessions from 10\.9\.9\.9 are denied on cluster `default`"):
        http_connect(gateway, "adm_pia", "10.9.9.9")
    rest = requests.post(f"http://{HOST}:{gateway.rest_port}/api/v1/sessions", auth=("adm_pia", "x"),
                         headers={"X-Real-IP": "10.9.9.9"}, json={"configs": {}}, timeout=30)
    assert rest.status_code == 403 and "sessions from 10.9.9.9 are denied" in rest.text, rest.text

    pia = http_connect(gateway, "adm_pia", "10.1.2.3")
    # Each address has its own place: another client's address is not the proxy's.
    rex = http_connect(gateway, "adm_rex", "10.1.2.4")
    with pytest.raises(Exception, match=r"client address 10\.1\.2\.3 already has 1 open session"):
        http_connect(gateway, "adm_zoe", "10.1.2.3")
    listed = requests.get(f"http://{HOST}:{gateway.rest_port}/api/v1/admin/sessions", auth=(ADMIN, "x"),
                          timeout=30).json()
    assert {(s["user"], s["ipAddr"]) for s in listed} == {("adm_pia", "10.1.2.3"), ("adm_rex", "10.1.2.4")}, listed
    # The binary port has no headers: its clients are their TCP peers.
    connect(gateway, "adm_bin").close()
    pia.close()
    rex.close()
