"""Tables whose locations are object-store URLs: S3 (a real S3 API server, moto's) and HTTP.

The engine opens each store on first use from the location's scheme, configured from its
environment (which a cluster config's `env` section sets in production).
"""

import csv
import functools
import http.server
import io
import random
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import boto3
import duckdb
import pytest

from harness import hive
from harness.beeline import binary_url, run_beeline
from harness.engine import HOST, stop_process

BUCKET = "lake"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "kumiho-test", "AWS_SECRET_ACCESS_KEY": "kumiho-test-secret"}
READY_TIMEOUT_S = 60


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def s3_endpoint(tmp_path_factory):
    """moto's S3 server on a free loopback port, answering once it serves requests."""
    port = free_port()
    log = (tmp_path_factory.mktemp("moto") / "moto.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", HOST, "-p", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    endpoint = f"http://{HOST}:{port}"
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        try:
            urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=2).close()
            break
        except (urllib.error.URLError, ConnectionError):
            if process.poll() is not None or time.monotonic() > deadline:
                stop_process(process)
                raise RuntimeError(f"moto's S3 server did not start; see {log.name}")
            time.sleep(0.1)
    yield endpoint
    stop_process(process)
    log.close()


@pytest.fixture(scope="module")
def lake(s3_endpoint, tmp_path_factory):
    """A bucket holding `trips` as two CSV files and `fares` as Parquet, with the rows written."""
    rng = random.Random(7)
    trips = [(i, rng.choice(["north", "south", "east"]), rng.randint(100, 9999)) for i in range(500)]
    s3 = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1",
                      aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
                      aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"])
    s3.create_bucket(Bucket=BUCKET)
    for part, rows in enumerate([trips[:250], trips[250:]]):
        text = io.StringIO()
        writer = csv.writer(text)
        writer.writerow(["id", "zone", "cents"])
        writer.writerows(rows)
        s3.put_object(Bucket=BUCKET, Key=f"trips/part-{part}.csv", Body=text.getvalue().encode())
    parquet = tmp_path_factory.mktemp("fares") / "fares.parquet"
    duckdb.sql(
        f"COPY (SELECT range AS id, range * 3 AS amount FROM range(1000)) TO '{parquet}' (FORMAT parquet)"
    )
    s3.upload_file(str(parquet), BUCKET, "fares/part-0.parquet")
    return trips


def engine_env(s3_endpoint: str) -> dict:
    return {**CREDENTIALS, "AWS_ENDPOINT": s3_endpoint, "AWS_ALLOW_HTTP": "true",
            "AWS_REGION": "us-east-1"}


def test_configured_s3_tables_answer_pyhive(start_own_engine, s3_endpoint, lake, tmp_path):
    config = tmp_path / "engine.yaml"
    config.write_text(
        "tables:\n"
        f"  trips: {{format: csv, location: 's3://{BUCKET}/trips/'}}\n"
        f"  sales.fares: {{format: parquet, location: 's3://{BUCKET}/fares/'}}\n"
    )
    engine = start_own_engine("--config", str(config), env=engine_env(s3_endpoint))
    connection = hive.connect(engine)
    try:
        _, _, rows = hive.query(connection, "SELECT zone, count(*), sum(cents) FROM trips GROUP BY zone ORDER BY zone")
        _, _, fares = hive.query(connection, "SELECT count(*), sum(amount) FROM sales.fares")
    finally:
        connection.close()
    expected = {}
    for _, zone, cents in lake:
        count, total = expected.get(zone, (0, 0))
        expected[zone] = (count + 1, total + cents)
    assert rows == [(zone, *expected[zone]) for zone in sorted(expected)]
    assert fares == [(1000, 3 * sum(range(1000)))]


def test_create_external_table_on_s3_through_beeline(start_own_engine, s3_endpoint, lake):
    engine = start_own_engine(env=engine_env(s3_endpoint))
    run = run_beeline(binary_url(engine.port), [
        f"CREATE EXTERNAL TABLE trips STORED AS CSV LOCATION 's3://{BUCKET}/trips/' OPTIONS ('format.has_header' 'true')",
        "SELECT count(*), max(id) FROM trips",
        "CREATE EXTERNAL TABLE missing STORED AS PARQUET LOCATION 's3://no-such-bucket/x/'",
    ])
    assert run.result_sets()[1][1:] == [[str(len(lake)), str(len(lake) - 1)]], run.describe()
    # The last statement fails for this client alone, naming the bucket S3 did not find.
    assert run.returncode != 0, run.describe()
    assert "no-such-bucket" in run.stdout + run.stderr, run.describe()
    connection = hive.connect(engine)
    try:
        assert hive.query(connection, "SELECT count(*) FROM trips")[2] == [(len(lake),)]
    finally:
        connection.close()


@pytest.fixture
def http_files(tmp_path):
    """A plain HTTP file server (Python's) over a directory, on a free loopback port."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer((HOST, 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield tmp_path, f"http://{HOST}:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_csv_file_over_http(start_own_engine, http_files, tmp_path):
    directory, base_url = http_files
    (directory / "events.csv").write_text("kind,n\nclick,3\nview,4\nclick,5\n")
    config = tmp_path / "engine.yaml"
    config.write_text(f"tables:\n  events: {{format: csv, location: '{base_url}/events.csv'}}\n")
    engine = start_own_engine("--config", str(config))
    connection = hive.connect(engine)
    try:
        rows = hive.query(connection, "SELECT kind, sum(n) FROM events GROUP BY kind ORDER BY kind")[2]
    finally:
        connection.close()
    assert rows == [("click", 8), ("view", 4)]


def test_an_unknown_scheme_fails_the_engine_start_naming_the_table(engine_binary, tmp_path):
    config = tmp_path / "engine.yaml"
    config.write_text("tables:\n  t: {format: csv, location: 'ftp://files.example.com/t/'}\n")
    result = subprocess.run(
        [str(engine_binary), "--host", HOST, "--port", "0", "--config", str(config)],
        capture_output=True, text=True, timeout=READY_TIMEOUT_S,
    )
    assert result.returncode != 0
    assert "'t'" in result.stderr and "ftp://" in result.stderr, result.stderr
