"""PyHive, the Python DB-API client for HiveServer2, connected the ways its users connect."""

from pyhive import hive
from TCLIService import ttypes  # noqa: F401 (PyHive's bindings: states and status codes)

from .engine import HOST

# How PyHive reaches the server: SASL PLAIN (its default, auth='NONE' sends the password
# 'x'), raw binary protocol (auth='NOSASL'), or HTTP (scheme='http', path /cliservice/).
MODES = ("sasl", "nosasl", "http")


def connect(engine, mode: str = "sasl", user: str = "alice", password: str | None = None):
    if mode == "sasl":
        auth = "CUSTOM" if password is not None else "NONE"
        return hive.connect(HOST, engine.port, username=user, auth=auth, password=password)
    if mode == "nosasl":
        return hive.connect(HOST, engine.port, username=user, auth="NOSASL")
    if mode == "http":
        return hive.connect(HOST, engine.http_port, scheme="http", username=user, password=password)
    raise ValueError(f"unknown PyHive mode {mode!r}; one of {MODES}")


def query(connection, sql: str) -> tuple[list[str], list[str], list[tuple]]:
    """Runs one statement; returns column names, HiveServer2 type names and all rows."""
    with connection.cursor() as cursor:
        cursor.execute(sql)
        rows = cursor.fetchall()
        names = [column[0] for column in cursor.description]
        types = [column[1] for column in cursor.description]
    return names, types, rows
