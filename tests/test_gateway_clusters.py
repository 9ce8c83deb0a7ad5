"""Cluster configs: picking a cluster per session, unknown names, and edits without a restart."""

import pytest

from gateway_fixtures import *  # noqa: F401,F403 (fixtures)
from gateway_fixtures import DEFAULT_CLUSTER, SessionRefused, live_registrations, open_session

SECOND_CLUSTER = """\
registry:
  embedded: {namespace: second}
engine:
  share-level: SERVER
  idle-timeout: 5m
"""


def test_session_cluster_reaches_a_second_cluster_with_its_own_registry(kumiho):
    kumiho.write_cluster("second", SECOND_CLUSTER)
    kumiho.wait_for_log(r"cluster added.*second|second.*cluster added")
    session = open_session(kumiho, "alice", configuration={"set:hiveconf:kyuubi.session.cluster": "second"})
    result = session.wait_launched()
    assert session.configuration["kyuubi.session.cluster"] == "second"
    assert result["engine.share.level"] == "SERVER"
    assert result["engine.space"].startswith("/second_")
    assert live_registrations(kumiho.work_dir, result["engine.space"])
    assert session.query("select 1")[0] == [1]
    session.close()


def test_unknown_cluster_fails_with_the_list_of_clusters(kumiho):
    kumiho.write_cluster("second", SECOND_CLUSTER)
    kumiho.wait_for_log(r"cluster added.*second|second.*cluster added")
    with pytest.raises(SessionRefused) as refused:
        open_session(kumiho, "alice", configuration={"kyuubi.session.cluster": "nope"})
    message = str(refused.value)
    assert "`nope`" in message and "default, second" in message, message


def test_edit_changes_the_next_session_and_a_broken_edit_keeps_the_old_settings(kumiho):
    before = open_session(kumiho, "alice")
    assert before.wait_launched()["engine.share.level"] == "USER"
    before.close()

    mark = len(kumiho.log())
    kumiho.write_cluster("default", DEFAULT_CLUSTER.replace("share-level: USER", "share-level: SERVER"))
    kumiho.wait_for_log(r"cluster reloaded", after=mark)
    after = open_session(kumiho, "alice")
    assert after.wait_launched()["engine.share.level"] == "SERVER"
    after.close()

    mark = len(kumiho.log())
    kumiho.write_cluster("default", "engine:\n  share-level: [USER\n")
    reported = kumiho.wait_for_log(r"default\.yaml.*line \d+.*", after=mark)
    assert "stays in force" in reported, reported
    still = open_session(kumiho, "alice")
    assert still.wait_launched()["engine.share.level"] == "SERVER"
    assert still.query("select 7")[0] == [7]
    still.close()
