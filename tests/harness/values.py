"""One comparable form for a value, whether beeline printed it or PyHive returned it.

Keyed by the HiveServer2 type name PyHive reports in `cursor.description` (e.g.
"DECIMAL_TYPE"): beeline's text and PyHive's Python objects both become the same plain
Python value, so that two clients can be compared with each other and with expectations.
"""

import datetime
import json
from decimal import Decimal

INTEGERS = {"TINYINT_TYPE", "SMALLINT_TYPE", "INT_TYPE", "BIGINT_TYPE"}
FLOATS = {"FLOAT_TYPE", "DOUBLE_TYPE"}
NESTED = {"ARRAY_TYPE", "MAP_TYPE", "STRUCT_TYPE", "UNION_TYPE"}


def from_beeline(text: str, type_name: str):
    """Beeline prints NULL for SQL NULL and everything else with Hive JDBC's getString."""
    if text == "NULL":
        return None
    if type_name == "BOOLEAN_TYPE":
        assert text in ("true", "false"), f"boolean printed as {text!r}"
        return text == "true"
    if type_name in INTEGERS:
        return int(text)
    if type_name in FLOATS:
        return float(text)
    if type_name == "DECIMAL_TYPE":
        return Decimal(text)
    if type_name == "BINARY_TYPE":
        return text.encode()
    if type_name == "TIMESTAMP_TYPE":
        return datetime.datetime.fromisoformat(text)
    if type_name in NESTED:
        return json.loads(text)
    return text


def from_pyhive(value, type_name: str):
    """PyHive converts DECIMAL and TIMESTAMP itself and leaves nested values as JSON text."""
    if value is None:
        return None
    if type_name in NESTED:
        return json.loads(value)
    if type_name == "DECIMAL_TYPE":
        return Decimal(value)
    if type_name in FLOATS:
        return float(value)
    return value
