"""Reads a Prometheus endpoint: the text format (0.0.4) parsed into samples, by hand, since
the `prometheus_client` package is not a test dependency."""

import re
import urllib.request

from harness.engine import HOST

# name{label="value",...} value  (label values escape \\, \" and \n)
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?')


def parse(text: str) -> dict:
    """{(name, frozenset of (label, value)): float}; fails on a line that is no sample,
    comment or blank, so that a malformed exposition fails the test that reads it."""
    samples = {}
    types = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 4 and parts[1] == "TYPE":
                types[parts[2]] = parts[3]
            continue
        match = SAMPLE.match(line)
        assert match, f"not a sample line: {line!r}"
        name, labels, value = match.groups()
        pairs = LABEL.findall(labels or "")
        assert "".join(f'{k}="{v}",' for k, v in pairs).rstrip(",") == (labels or "").rstrip(","), \
            f"bad labels in {line!r}"
        unescaped = {(k, v.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")) for k, v in pairs}
        key = (name, frozenset(unescaped))
        assert key not in samples, f"sample given twice: {line!r}"
        samples[key] = float(value)
    return Metrics(samples, types)


class Metrics(dict):
    """Samples of one scrape, with the declared types."""

    def __init__(self, samples: dict, types: dict):
        super().__init__(samples)
        self.types = types

    def value(self, name: str, **labels) -> float | None:
        """The sample with exactly these labels, or None."""
        return self.get((name, frozenset(labels.items())))

    def sum(self, name: str, **labels) -> float:
        """The sum of the samples of `name` whose labels include these."""
        wanted = set(labels.items())
        return sum(v for (n, ls), v in self.items() if n == name and wanted <= ls)


def scrape(port: int, path: str = "/metrics") -> Metrics:
    with urllib.request.urlopen(f"http://{HOST}:{port}{path}", timeout=10) as response:
        assert response.status == 200, response.status
        content_type = response.headers["Content-Type"]
        assert content_type.startswith("text/plain; version=0.0.4"), content_type
        return parse(response.read().decode())
