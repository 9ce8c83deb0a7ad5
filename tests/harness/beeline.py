"""Runs pyspark's beeline (Hive JDBC 2.3) and splits what it prints into result sets."""

import csv
import io
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).resolve().parent
BEELINE = SPARK_HOME / "bin" / "beeline"
# Two JVMs start (Spark's launcher, then beeline): a few seconds; a hang is a failure.
BEELINE_TIMEOUT_S = 90
# With -f, beeline prints its prompt before each statement it runs, e.g.
# "0: jdbc:hive2://127.0.0.1:10009/default> ". After a statement that prints nothing (USE)
# the next prompt follows on the same line, so prompts are not anchored to line starts.
PROMPT = re.compile(r"\d+: jdbc:hive2://[^\s>]*> ")


def binary_url(port: int, database: str = "default", options: str = "") -> str:
    """JDBC URL for the binary transport; `options` such as ";auth=noSasl"."""
    return f"jdbc:hive2://127.0.0.1:{port}/{database}{options}"


def http_url(port: int, database: str = "default") -> str:
    return f"jdbc:hive2://127.0.0.1:{port}/{database};transportMode=http;httpPath=cliservice"


@dataclass
class BeelineRun:
    """What one beeline invocation printed."""

    returncode: int | None  # None: killed after the timeout
    stdout: str
    stderr: str
    statement_count: int

    def result_sets(self) -> list[list[list[str]]]:
        """One entry per statement that ran, in order: [header, row, row, ...] ([] for a
        statement without a result set). Beeline stops at the first failing statement.

        Beeline's csv2 output does not quote: a value that holds the separator is
        surrounded by NUL characters, which is what `quotechar` says here.
        """
        # Beeline prints a prompt or two more after the last statement: not results.
        chunks = PROMPT.split(self.stdout)[1 : 1 + self.statement_count]
        return [
            list(csv.reader(io.StringIO(chunk), quotechar="\0"))
            for chunk in chunks
        ]

    def describe(self) -> str:
        return f"beeline exited {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


def run_beeline(
    url: str,
    statements: list[str],
    user: str = "alice",
    password: str = "x",
    timeout: float = BEELINE_TIMEOUT_S,
    env: dict | None = None,
) -> BeelineRun:
    """Runs the statements (one per line, no trailing ';') as one beeline script.
    Beeline commands (`!tables`, `!primarykeys t`) run as they are: beeline would read a
    `;` after them as part of their argument.

    One JVM serves all statements of a call: batch what a test needs. `env` (default: this
    process's) is beeline's environment, SPARK_HOME aside.
    """
    for statement in statements:
        assert "\n" not in statement, "one line per statement keeps the prompts aligned"
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as script:
        script.write("".join(
            f"{statement}\n" if statement.startswith("!") else f"{statement};\n" for statement in statements
        ))
    command = [
        str(BEELINE),
        "-u", url,
        "-n", user,
        "-p", password,
        "--silent=false",
        "--outputformat=csv2",
        "-f", script.name,
    ]
    try:
        completed = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**(os.environ if env is None else env), "SPARK_HOME": str(SPARK_HOME)},
        )
        return BeelineRun(completed.returncode, completed.stdout, completed.stderr, len(statements))
    except subprocess.TimeoutExpired as hung:
        # What it printed so far shows where it stuck; the caller's assertion reports it.
        text = lambda output: output if isinstance(output, str) else (output or b"").decode(errors="replace")
        return BeelineRun(None, text(hung.stdout), text(hung.stderr) + f"\n[killed after {timeout} s]", len(statements))
    finally:
        os.unlink(script.name)
