"""A result far larger than the engine's memory bound streams to the client: the engine's
RSS stays flat while ten million rows go out."""

from harness.thrift_client import column_values, session

ROWS = 10_000_000
PADDING = 50
# Each row: an 8-byte id and a ~57-byte string. Materialised, the result alone would take
# over 650 MB (before Arrow or Thrift overhead), more than twice the bound below.
QUERY = (
    f"SELECT value AS id, repeat('x', {PADDING}) || CAST(value AS VARCHAR) AS s "
    f"FROM generate_series(1, {ROWS})"
)
RSS_BOUND = 300 * 1024 * 1024
FETCH_SIZE = 100_000


def test_ten_million_rows_stream_with_flat_memory(start_own_engine):
    engine = start_own_engine()
    with session(engine.port) as (client, handle):
        # Warm up (thread pools, allocator) so the baseline is the engine at work, not idle.
        warmup = client.execute(handle, "SELECT count(*) FROM generate_series(1, 100000)")
        assert column_values(client.fetch(warmup, 10).columns[0]) == [100_000]
        baseline = engine.rss_bytes()

        operation = client.execute(handle, QUERY)
        rows = id_sum = fetches = 0
        peak = baseline
        while True:
            result = client.fetch(operation, FETCH_SIZE)
            ids = column_values(result.columns[0])
            if not ids:
                break
            strings = column_values(result.columns[1])
            assert len(ids) <= FETCH_SIZE, f"asked for {FETCH_SIZE} rows, got {len(ids)}"
            assert strings[0] == "x" * PADDING + str(ids[0]), f"row {rows}: {strings[0]!r}"
            rows += len(ids)
            id_sum += sum(ids)
            fetches += 1
            peak = max(peak, engine.rss_bytes())

    assert rows == ROWS
    assert id_sum == ROWS * (ROWS + 1) // 2
    growth = peak - baseline
    assert growth < RSS_BOUND, (
        f"engine RSS grew {growth >> 20} MiB while streaming {ROWS} rows in {fetches} fetches "
        f"(from {baseline >> 20} MiB): the result is being materialised"
    )
