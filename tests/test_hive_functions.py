"""Hive's everyday functions and table commands on the DataFusion engine, through the
gateway with beeline: the answers Hive gives, and the Spark Thrift Server's answers to the
same statements where Hive and Spark agree."""

import pytest

from gateway_fixtures import *  # noqa: F401,F403 (fixtures)
from harness.beeline import binary_url, run_beeline
from harness.spark import spark_cluster_yaml, stop_spark_engines

# Statements and the one row Hive answers, as beeline prints it. Each is one statement so
# that a failure names the function.
FUNCTIONS = {
    "SELECT if(1 > 2, 'yes', 'no') AS v, if(NULL, 1, 2) AS w": ["no", "2"],
    "SELECT isnull(NULL) AS v, isnotnull(NULL) AS w": ["true", "false"],
    "SELECT year('2024-03-05 10:11:12') AS y, month('2024-03-05') AS m, day('2024-03-05') AS d": ["2024", "3", "5"],
    "SELECT hour('2024-03-05 10:11:12') AS h, minute('2024-03-05 10:11:12') AS m, second('2024-03-05 10:11:12') AS s": ["10", "11", "12"],
    "SELECT quarter('2024-08-05') AS q, dayofweek('2024-03-03') AS dw, weekofyear('2021-01-03') AS w": ["3", "1", "53"],
    "SELECT datediff('2024-03-05', '2024-02-01') AS d": ["33"],
    "SELECT date_add('2024-02-28', 2) AS a, date_sub('2024-03-01', 1) AS s": ["2024-03-01", "2024-02-29"],
    "SELECT last_day('2024-02-10') AS l": ["2024-02-29"],
    "SELECT date_format('2024-03-05 14:07:09', 'yyyy/MM/dd HH:mm') AS f": ["2024/03/05 14:07"],
    "SELECT from_unixtime(86400) AS f, unix_timestamp('1970-01-02 00:00:00') AS u": ["1970-01-02 00:00:00", "86400"],
    "SELECT split('a,b,,c,', ',') AS s, size(split('a,b,,c', ',')) AS n": ['["a","b","","c",""]', "4"],
    "SELECT regexp_extract('foo123bar', '([a-z]+)([0-9]+)', 2) AS r": ["123"],
    "SELECT get_json_object('{\"a\":{\"b\":[1,2]}}', '$.a.b[1]') AS j": ["2"],
    "SELECT locate('b', 'abcb', 3) AS l, pmod(-7, 3) AS p": ["4", "2"],
    "SELECT size(collect_list(x)) AS l, size(collect_set(x)) AS s FROM (VALUES (1), (1), (2), (NULL)) t(x)": ["3", "2"],
    "SELECT concat('a', NULL) IS NULL AS c, substr('hello', -3) AS s": ["true", "llo"],
    # concat_ws joins arrays' elements (the collect_list report idiom), skipping NULLs.
    "SELECT concat_ws(',', array('a', 'b')) AS a, concat_ws('-', 'a', array('b', NULL, 'c'), NULL, 'd') AS b, concat_ws(NULL, 'a') IS NULL AS c": ["a,b", "a-b-c-d", "true"],
    "SELECT concat_ws(',', sort_array(collect_list(x))) AS l FROM (VALUES ('b'), ('a'), (NULL)) t(x)": ["a,b"],
    # Unnamed columns alike (Kumiho names the second _c1, as Hive would, where Spark repeats NULL).
    "SELECT NULL, NULL, 1, 1": ["NULL", "NULL", "1", "1"],
    "SELECT split('a,b,c', ',')[0] AS f, 'foobar' RLIKE 'o+b' AS r": ["a", "true"],
    "SELECT trunc('2024-05-17', 'MM') AS t, to_date('02/01/2024', 'dd/MM/yyyy') AS d": ["2024-05-01", "2024-01-02"],
    "SELECT months_between('1997-02-28 10:30:00', '1996-10-30') AS m": ["3.94959677"],
    # A string the pattern cannot read is NULL, not a failed query.
    "SELECT unix_timestamp('garbage', 'dd/MM/yyyy') IS NULL AS u, to_date('garbage', 'dd/MM/yyyy') IS NULL AS d, unix_timestamp('02/01/1970', 'dd/MM/yyyy') AS v": ["true", "true", "86400"],
    "SELECT 1 / 2 AS h, 1 / 0 IS NULL AS z": ["0.5", "true"],
    "SELECT CAST('abc' AS INT) IS NULL AS c": ["true"],
    "SELECT CAST('1.5' AS INT) AS a, CAST('-1.9' AS BIGINT) AS b, CAST('300' AS TINYINT) IS NULL AS c, CAST(300 AS TINYINT) AS d, CAST(70000 AS SMALLINT) AS e": ["1", "-1", "true", "44", "4464"],
    "SELECT 7 DIV 2 AS a, -7 DIV 2 AS b, 7 DIV 0 IS NULL AS z, 7.9 DIV 0.5 AS d": ["3", "-3", "true", "15"],
    # A quote escaped with a backslash, as in Hive.
    "SELECT 'it\\'s' AS q, length('a\\\\') AS b": ["it's", "2"],
    # Written as for Hive: '\\|' in SQL is the regex \|.
    "SELECT split('a|b', '\\\\|')[1] AS s, regexp_extract('ab12', '(\\\\d+)', 1) AS d": ["b", "12"],
    # Double quotes make a string, as in Hive and Spark SQL, with the same escapes.
    'SELECT "abc" AS a, concat("a", \'b\') AS c, "it\\"s" AS q, split("a|b", "\\\\|")[1] AS s': ["abc", "ab", 'it"s', "b"],
    # LATERAL VIEW over a join: the joined rows exploded; no row for a NULL array without
    # OUTER, one with.
    "SELECT count(*) AS c, sum(v.x) AS s FROM (SELECT 1 AS id UNION ALL SELECT 2 AS id) p LEFT JOIN (SELECT 1 AS id, array(10, 20) AS xs) t ON p.id = t.id LATERAL VIEW explode(t.xs) v AS x": ["2", "30"],
    "SELECT count(*) AS c, sum(v.x) AS s FROM (SELECT 1 AS id UNION ALL SELECT 2 AS id) p LEFT JOIN (SELECT 1 AS id, array(10, 20) AS xs) t ON p.id = t.id LATERAL VIEW OUTER explode(t.xs) v AS x": ["3", "30"],
    "SELECT e() AS e, negative(2) AS n, sign(-3) AS s, shiftleft(1, 4) AS l, shiftright(-16, 2) AS r, ~5 AS t": ["2.718281828459045", "-2", "-1.0", "16", "-4", "-6"],
    "SELECT hex(255) AS a, hex(-1) AS b, hex('Hi') AS c, base64(CAST('ab' AS BINARY)) AS d, elt(2, 'a', 'b') AS e, elt(3, 'a', 'b') IS NULL AS f": ["FF", "FFFFFFFFFFFFFFFF", "4869", "YWI=", "b", "true"],
    "SELECT parse_url('http://u@a.com:80/p/q.html?k=1&j=2#r', 'HOST') AS h, parse_url('http://u@a.com:80/p/q.html?k=1&j=2#r', 'QUERY', 'j') AS j, parse_url('http://u@a.com:80/p/q.html?k=1&j=2#r', 'FILE') AS f, parse_url('http://u@a.com:80/p/q.html?k=1&j=2#r', 'AUTHORITY') AS a, parse_url('http://a.com/p', 'QUERY') IS NULL AS n": ["a.com", "2", "/p/q.html?k=1&j=2", "u@a.com:80", "true"],
    "SELECT str_to_map('a:1,b:2')['b'] AS b, size(str_to_map('k=v;x=y', ';', '=')) AS n, str_to_map('k=v;x', ';', '=')['x'] IS NULL AS x": ["2", "2", "true"],
    # Hive names the columns pos and val, Spark pos and col.
    "SELECT posexplode(array('a', 'b'))": ["0", "a"],
    "SELECT conv('100', 2, 10) AS a, conv(-10, 16, -10) AS b, conv('-1', 10, 16) AS c, bin(13) AS d": ["4", "-16", "FFFFFFFFFFFFFFFF", "1101"],
    "SELECT CAST(unhex('4869') AS STRING) AS a, CAST(unbase64('SGk=') AS STRING) AS b, sha1('abc') AS c, crc32('ABC') AS d, soundex('Miller') AS e": ["Hi", "Hi", "a9993e364706816aba3e25717850c26c9cd0d89d", "2743272264", "M460"],
    "SELECT format_number(1234567.891, 2) AS a, format_number(1.5, 0) AS b, next_day('2015-01-14', 'TU') AS n": ["1,234,567.89", "2", "2015-01-20"],
    "SELECT printf('%s has %d items', 'cart', 3) AS a, printf('%05d', 42) AS b, printf('%,d', 1234567) AS c": ["cart has 3 items", "00042", "1,234,567"],
}
# Statements whose whole answers (column names and every row, in order) must be the
# Spark Thrift Server's: Hive's generators and the functions added with them.
SPARK_ANSWERS = [
    # json_tuple in LATERAL VIEW, the everyday form: strings, nested values as JSON text,
    # NULL for a missing key, a JSON null, a text that is not JSON, a NULL text.
    "SELECT t.id, v.a, v.b, v.c FROM (VALUES (1, '{\"a\": 1, \"b\": \"x\", \"c\": {\"d\": [1, 2]}}'), (2, '{\"b\": null}'), (3, 'not json'), (4, NULL)) t(id, js) LATERAL VIEW json_tuple(t.js, 'a', 'b', 'c') v AS a, b, c ORDER BY t.id",
    # Nested values as Jackson writes them: keys in the text's order, Java's numbers.
    "SELECT get_json_object('{\"o\": {\"z\": 1, \"a\": [1.5, 12345678.9, 1e-4, true, null]}}', '$.o') AS g, json_tuple('{\"o\": {\"z\": 1, \"a\": [2.5e10]}}', 'o') AS j",
    # In a select list: named c0, c1, ... or by an alias list.
    "SELECT json_tuple('{\"a\": 1.5, \"b\": [true, null]}', 'a', 'b', 'zz')",
    "SELECT json_tuple('{\"a\": 1, \"b\": \"y\"}', 'b', 'a') AS (x, y)",
    # stack: n rows, filled row by row, NULL where the values run out.
    "SELECT stack(3, 'a', 1, 'b', 2, 'c')",
    "SELECT t.id, s.k, s.v FROM (VALUES (1), (2)) t(id) LATERAL VIEW stack(2, 'x', t.id * 10, 'y', t.id * 20) s AS k, v ORDER BY t.id, s.k",
    # inline: a row per struct, named by the fields or the alias list; OUTER keeps a row
    # for a NULL array.
    "SELECT inline(array(named_struct('a', 1, 'b', 'x'), named_struct('a', 2, 'b', 'y')))",
    "SELECT inline(array(named_struct('a', 1, 'b', 'x'))) AS (p, q)",
    "SELECT t.id, i.a, i.b FROM (VALUES (1), (2)) t(id) LATERAL VIEW OUTER inline(if(t.id = 1, array(named_struct('a', 1, 'b', 'x'), named_struct('a', 2, 'b', 'y')), NULL)) i AS a, b ORDER BY t.id, i.a",
    "SELECT count(*) AS n FROM (VALUES (1), (2)) t(id) LATERAL VIEW inline(if(t.id = 1, array(named_struct('a', 1)), NULL)) i AS a",
    # explode and posexplode with Hive's alias list.
    "SELECT explode(map('a', 1, 'b', 2)) AS (k, v)",
    "SELECT posexplode(array('x', 'y')) AS (p, e)",
    # Hive 2.x's mask: X, x, n, others kept; or the replacements given.
    "SELECT mask('AbC-d12 x') AS a, mask('AbC-d12', 'U', 'l', '#') AS b, mask('Ab1-', 'Q', 'q', 'D', '*') AS c, mask(NULL) AS d",
    "SELECT width_bucket(5.3, 0.2, 10.6, 5) AS a, width_bucket(-1, 0, 10, 5) AS b, width_bucket(10, 0, 10, 5) AS c, width_bucket(8, 10, 0, 5) AS d, width_bucket(1, 0, 10, 0) AS e, width_bucket(NULL, 0, 1, 2) AS f",
    # Java's BreakIterator sentences and words.
    "SELECT sentences('Hello there! I am a UDF.') AS a, sentences('It costs $5.50, i.e. 3.5% of U.S.A.\\'s don\\'t-care budget. next one? Yes!!  Ok') AS b, sentences('Dr. Smith went home. the end', 'en', 'US') AS c, sentences('') AS d",
    "SELECT sentences('He said \"Hi.\" She left. (Really?) 1.5 apples. #1 and $2 or 50% off.Next.(Then) x') AS s",
    # Up to b distinct values the histogram is exact, whatever Spark's partitions merged.
    "SELECT histogram_numeric(CAST(x AS DOUBLE), 5) AS h FROM (VALUES (1), (2), (2), (3), (NULL)) t(x)",
    # Charsets: UTF-16 writes a byte-order mark and reads either.
    # Hive's XPath examples (LanguageManual XPathUDF): node values, the first node's text,
    # booleans, numbers narrowed as Java narrows them; NULL for a NULL or empty XML.
    "SELECT xpath('<a><b>b1</b><b>b2</b></a>', 'a/*/text()') AS a, xpath('<a><b id=\"foo\">b1</b><b id=\"bar\">b2</b></a>', '//@id') AS b, xpath('<a><b class=\"bb\">b1</b><b>b2</b><c class=\"bb\">c1</c></a>', 'a/*[@class=\"bb\"]/text()') AS c, xpath('<a><b id=\"1\"><c/></b><b id=\"2\"><c/></b></a>', '/descendant::c/ancestor::b/@id') AS d, xpath('<a><b>b1</b></a>', 'a/c') AS e, xpath('', 'a') AS f",
    "SELECT xpath_string('<a><b>bb</b><c>cc</c></a>', 'a') AS a, xpath_string('<a><b>bb</b><c>cc</c></a>', 'a/d') AS b, xpath_string('<a><b>b1</b><b>b2</b></a>', 'a/b[2]') AS c, xpath_string('<a><b>b1</b><b id=\"b_2\">b2</b></a>', 'a/b[@id=\"b_2\"]') AS d, xpath_string('<a><b>3</b></a>', 'a/b div 2') AS e, xpath_string('<a/>', '1 div 0') AS f, xpath_string('<a xmlns=\"urn:x\"><b>ns</b></a>', '/a/b') AS g, xpath_string(NULL, 'a') AS h",
    "SELECT xpath_boolean('<a><b>b</b></a>', 'a/b') AS a, xpath_boolean('<a><b>b</b></a>', 'a/c') AS b, xpath_boolean('<a><b>b</b></a>', 'a/b = \"b\"') AS c, xpath_boolean('<a><b>10</b></a>', 'a/b < 10') AS d, xpath_boolean('<a><b>10</b></a>', 'a/b = 10') AS e",
    "SELECT xpath_int('<a>b</a>', 'a = 10') AS a, xpath_int('<a>this 2 is not a number</a>', 'a') AS b, xpath_int('<a><b>1</b><b>2</b><b>4</b><c>8</c></a>', 'sum(a/*)') AS c, xpath_int('<a><b class=\"odd\">1</b><b class=\"even\">2</b><b class=\"odd\">4</b></a>', 'sum(a/b[@class=\"odd\"])') AS d, xpath_int('<a><b>2000000000</b><c>40000000000</c></a>', 'a/b * a/c') AS e, xpath_long('<a><b>2000000000</b><c>40000000000</c></a>', 'a/b * a/c') AS f, xpath_short('<a><b>70000</b></a>', 'a/b') AS g, xpath_double('<a><b>2000000000</b><c>40000000000</c></a>', 'a/b * a/c') AS h, xpath_number('<a>no</a>', 'a') AS i, xpath_double('<a><b>1e3</b></a>', 'a/b') AS j, xpath_float('<a><b>0.5</b></a>', 'a/b') AS k, xpath_int('', 'a') AS l",
    # reflect of the Java static methods analysts call; Java's toString of the value.
    "SELECT reflect('java.lang.String', 'valueOf', 1) AS a, reflect('java.lang.Math', 'max', 2, 3) AS b, java_method('java.lang.Math', 'round', CAST(2.5 AS DOUBLE)) AS c, reflect('java.lang.Math', 'exp', CAST(1 AS DOUBLE)) AS d, reflect('java.lang.Math', 'floor', CAST(1.9 AS DOUBLE)) AS e, reflect('java.lang.Math', 'floorMod', -7, 3) AS f, reflect('java.util.UUID', 'fromString', 'A5CF6C42-0C85-418F-AF6C-3E4E5B1328F2') AS g, length(reflect('java.util.UUID', 'randomUUID')) AS h",
    "SELECT reflect('java.net.URLDecoder', 'decode', 'a%20b+c%C3%A9', 'UTF-8') AS a, reflect('java.net.URLEncoder', 'encode', 'a b&c=\u00e9~*._-', 'UTF-8') AS b, reflect('java.lang.Integer', 'parseInt', '42') AS c, reflect('java.lang.Integer', 'toHexString', -1) AS d, reflect('java.lang.Long', 'toHexString', CAST(-1 AS BIGINT)) AS e, reflect('java.lang.Double', 'parseDouble', '1e3') AS f, reflect('java.lang.Boolean', 'parseBoolean', 'TRUE') AS g, reflect('java.lang.String', 'valueOf', CAST(1e20 AS DOUBLE)) AS h",
    "SELECT url_encode('a b&c=\u00e9') AS a, url_decode('a%20b+c') AS b, try_url_decode('%zz') AS c",
    # Spark's functions DataFusion lacked, and its names for DataFusion's.
    "SELECT regexp_extract_all('100-200, 300-400', '(\\\\d+)-(\\\\d+)', 2) AS a, regexp_extract_all('a1b22', '[0-9]+', 0) AS b, array_size(array(1, NULL, 3)) AS c, map_contains_key(map('a', 1), 'a') AS d, try_divide(1, 2) AS e, try_divide(1, 0) AS f, bit_count(7) AS g, bit_get(11, 2) AS h, getbit(11, 3) AS i",
    "SELECT startswith('hello', 'he') AS a, endswith('hello', 'lo') AS b, len('h\u00e9llo') AS c, date_diff('2024-03-05', '2024-03-01') AS d, dateadd('2024-02-28', 2) AS e",
    "SELECT expm1(1) AS a, log1p(1) AS b, rint(2.5) AS c, hypot(3, 4) AS d, expm1(1e-10) AS e",
    # Set operations counting copies, PIVOT and UNPIVOT, LIKE over a list, interval ranges,
    # and a UNION whose branches differ in type (described as the rows come: DOUBLE).
    "SELECT x, y FROM (VALUES (1, 'a'), (1, 'a'), (1, 'a'), (2, NULL), (3, 'c')) l(x, y) INTERSECT ALL SELECT x, y FROM (VALUES (1, 'a'), (1, 'a'), (2, NULL)) r(x, y) ORDER BY x",
    "SELECT x FROM (VALUES (1), (1), (1), (2)) l(x) EXCEPT ALL SELECT x FROM (VALUES (1), (2)) r(x) ORDER BY x",
    "SELECT * FROM (SELECT emp_id, region, amount FROM (VALUES (1, 'north', 10), (1, 'south', 5), (2, 'north', 3)) t(emp_id, region, amount)) PIVOT (sum(amount) AS s, count(amount) AS c FOR region IN ('north' AS n, 'south')) ORDER BY emp_id",
    "SELECT * FROM (VALUES (1, 10, NULL, 'x'), (2, 7, 8, 'y')) t(id, q1, q2, k) UNPIVOT (v FOR quarter IN (q1, q2 AS second)) ORDER BY id, quarter",
    "SELECT 'abc' LIKE ALL ('a%', '%c') AS a, 'abc' LIKE ANY ('x%', NULL) AS b, 'abc' NOT LIKE ANY ('a%', '%x') AS c, 'ABC' ILIKE ANY ('a%') AS d",
    "SELECT TIMESTAMP'2024-01-01 10:00:00' + INTERVAL '1 12:30' DAY TO MINUTE AS a, TIMESTAMP'2024-01-01 10:00:00' - INTERVAL '1 02:03:04.5' DAY TO SECOND AS b, DATE'2024-01-31' + INTERVAL '1-2' YEAR TO MONTH AS c",
    "SELECT v FROM (SELECT 1 AS v UNION ALL SELECT 2.5D) u ORDER BY v",
    # Spark's lambda functions: the row's columns captured, exists/forall's three-valued
    # logic, a fold with a finish, pairs padded with NULLs, maps' entries, a comparator.
    "SELECT t.id, transform(t.a, (x, i) -> x * i + t.n) AS tr, filter(t.a, x -> x > t.n / 10) AS f, exists(t.a, x -> x > 3) AS e, forall(t.a, x -> x < 4) AS fa, aggregate(t.a, 0, (acc, x) -> acc + coalesce(x, 0), acc -> acc * 10) AS ag FROM (VALUES (1, array(1, 2, 3), 10), (2, array(4, NULL), 20), (3, CAST(NULL AS ARRAY<INT>), 30)) t(id, a, n) ORDER BY t.id",
    "SELECT zip_with(array(1, 2), array('a', 'b', 'c'), (x, y) -> concat(x, y)) AS z, map_filter(map('a', 1, 'b', 2), (k, v) -> v > 1) AS mf, transform_keys(map('a', 1), (k, v) -> upper(k)) AS tk, transform_values(map('a', 1), (k, v) -> v + 1) AS tv, map_zip_with(map('a', 1, 'b', 2), map('b', 3, 'c', 4), (k, v1, v2) -> coalesce(v1, 0) + coalesce(v2, 0)) AS mz, array_sort(array('bb', 'a', 'ccc'), (l, r) -> length(r) - length(l)) AS s",
    # struct's fields: colN for a value, a column's name for a column (Spark's; Hive's are all colN).
    "SELECT s.col1 AS a, s.col2 AS b, s, struct(x, t.y, x + 1) AS n FROM (SELECT struct(1, 'a') AS s) u, (VALUES (1, 'x')) t(x, y)",
    # Hive's GROUPING__ID and Spark's grouping_id: bit set = the column is not grouped.
    "SELECT a, b, GROUPING__ID, count(*) AS n FROM (VALUES (1, 'x'), (1, 'y'), (2, 'x')) t(a, b) GROUP BY a, b WITH ROLLUP ORDER BY grouping__id, a NULLS LAST, b NULLS LAST",
    "SELECT a, b, grouping_id(a, b) AS g, grouping_id() AS h FROM (VALUES (1, 'x'), (2, 'y')) t(a, b) GROUP BY CUBE(a, b) HAVING grouping__id > 0 ORDER BY g, a NULLS LAST, b NULLS LAST",
    "SELECT every(x > 0) AS a, some(x > 2) AS b, any(x > 5) AS c, count_if(x > 1) AS d FROM (VALUES (1), (2), (3)) t(x)",
    # NULL sorts first ascending, last descending, as the smallest value.
    "SELECT id, rank() OVER (ORDER BY v) AS r FROM (VALUES (1, 20), (2, NULL), (3, 10)) t(id, v) ORDER BY v DESC",
    # Typed number literals, casts written as functions, Spark's decode, percentiles of a list.
    "SELECT 2.5D + 1 AS a, 7Y AS b, CAST(1.25BD AS STRING) AS c, int('12.7') AS d, string(1) AS e, date('2024-01-31') AS f, tinyint(300) AS g, decode(2, 1, 'one', 2, 'two', 'other') AS h",
    "SELECT percentile(x, array(0.25, 0.75)) AS p, sum(x) AS s, sum(CAST(x AS DOUBLE)) AS d FROM (VALUES (1), (2), (3), (4)) t(x)",
    "SELECT date_trunc('MM', '2024-07-04 13:05:09') AS a, date_trunc('DD', '2024-07-04 13:05:09') AS b, split('abc', '') AS c, chr(321) AS d, to_timestamp('05/01/2024 10:11', 'dd/MM/yyyy HH:mm') AS e, CAST(TIMESTAMP '2024-01-15 09:30:00' AS BIGINT) AS f",
    "SELECT make_date(2024, 2, 30) AS a, reverse(array(1, 2, 3)) AS b, array_sort(array(3, NULL, 1)) AS c, CAST(CAST(NULL AS DOUBLE) AS INT) AS d, 5 % 0 AS e, mod(-7, 3) AS f, element_at(array(1, 2, 3), -1) AS g",
    "SELECT sqrt(-1) AS a, ln(0) AS b, log(10, 100) AS c, initcap('frank o''neil') AS d, extract(DOW FROM DATE '2024-06-09') AS e, from_utc_timestamp('2024-07-04 12:00:00', 'PST') AS f",
    "SELECT k, v FROM (SELECT map('x', 1, 'y', 2) AS m) LATERAL VIEW explode(m) t AS k, v ORDER BY k",
    "SELECT hex(encode('abc', 'UTF-16')) AS a, hex(encode('abc', 'utf-16le')) AS b, hex(encode('abc', 'UTF-16BE')) AS c, decode(unhex('FEFF0061'), 'UTF-16') AS d, decode(unhex('FFFE6100'), 'UTF-16') AS e, decode(unhex('61'), 'ISO-8859-1') AS f, decode(encode('xyz', 'US-ASCII'), 'US-ASCII') AS g, decode(encode('xyz', 'UTF-8'), 'UTF-8') AS h",
    # A text table's amounts: strings given to aggregates and functions of numbers are
    # DOUBLEs, one that is not a number NULL; a sign before a string column reads it too.
    "SELECT t.dept AS dept, sum(t.amount) AS total, avg(t.amount) AS mean, abs(min(-t.amount)) AS biggest FROM (VALUES ('eng', '12.5'), ('eng', '7'), ('hr', ' 3 '), ('hr', 'abc')) t(dept, amount) GROUP BY t.dept ORDER BY dept",
    # Numbers given to string functions are their text (a DOUBLE's is 80.0); row numbers.
    "SELECT t.id AS id, row_number() OVER (ORDER BY t.id DESC) AS rn, lpad(t.id, 4, '0') AS padded, substr(t.price, 1, 3) AS head FROM (VALUES (1, 80.0D), (2, 100.5D)) t(id, price) ORDER BY id",
    # TABLESAMPLE by rows takes that many.
    "SELECT count(*) AS n FROM (SELECT * FROM VALUES (1), (2), (3) AS v(x)) TABLESAMPLE (2 ROWS)",
    # Hive's idiom for ordered lists: the aggregates over an ordered subquery read its order.
    "SELECT t.k AS k, collect_list(t.v) AS vs, first(t.v) AS f, last(t.v) AS l, first(t.v, true) AS fv FROM (SELECT * FROM VALUES ('a', 3, 'x'), ('b', 1, 'p'), ('a', 1, 'y'), ('b', 2, NULL), ('a', 2, NULL), ('b', 3, 'q') AS e(k, ts, v) DISTRIBUTE BY k SORT BY ts DESC) t GROUP BY t.k ORDER BY k",
    # A BI tool's wrapper around an ordered query keeps its order; a string where an integer
    # is taken.
    "SELECT w.ts AS ts, w.v AS v, repeat('*', w.n) AS stars FROM (SELECT * FROM VALUES (1, 'a', '2'), (2, NULL, '1.5'), (3, 'c', 'x') AS e(ts, v, n) ORDER BY ts DESC) w LIMIT 2",
    # Spark's NULL-skipping flag over a window.
    "SELECT e.ts AS ts, last_value(e.v, true) OVER (ORDER BY e.ts) AS lv, first_value(e.v, true) OVER (ORDER BY e.ts DESC) AS fv FROM VALUES (1, 'a'), (2, NULL), (3, 'c'), (4, NULL) AS e(ts, v) ORDER BY ts",
    # Integer literals are INTs (a BIGINT beyond one), and an INT's arithmetic wraps; an
    # inline table's columns are col1, col2.
    "SELECT typeof(1) AS a, typeof(3000000000) AS b, 2147483647 + 1 AS c, typeof(coalesce(col1, 0)) AS d, typeof(col1 + 1) AS e, col2 AS f FROM VALUES (CAST(5 AS INT), 'x')",
    # Number formats, read and written; regexp_count counts Java's matches.
    "SELECT to_number('$1,234.50', '$9,999.99') AS n, to_char(-12454.8, '99G999D9S') AS c, to_char(5, '000') AS z, to_char(1234.5, '9,999.99') AS g, try_to_number('abc', '999') AS t, regexp_count('aaa', 'a*') AS r",
    # Intervals of fields, a string moved by an interval, || of values, an aggregate's INT
    # accumulator, a one-digit fraction of a second.
    "SELECT make_dt_interval(1, 2, 3, 4.5) AS dt, make_ym_interval(1, 2) AS ym, TIMESTAMP '2024-01-01 00:00:00' + make_dt_interval(1, 2) AS t, DATE '2024-01-31' + make_interval(0, 1) AS d, '2024-01-02' + INTERVAL 1 DAY AS s, 1 || TRUE AS c, typeof(aggregate(array(1, 2), 0, (acc, x) -> acc + x)) AS a, date_format(TIMESTAMP '2024-07-04 15:06:07.089', 's.S') AS f",
    # Aggregates that take no rows back, over a frame that slides; a VALUES column of arrays.
    "SELECT a, bool_and(a > 1) OVER w AS ba, string_agg(b, ',') OVER w AS sa, typeof(arr) AS ta FROM VALUES (1, 'x', array(1)), (2, 'y', array()), (4, 'z', array(2, 3)) AS t(a, b, arr) WINDOW w AS (ORDER BY a ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) ORDER BY a",
    # A sample's inferred schema, as text and as what from_json and from_csv read by; CSV
    # written and read; AES in ECB and, with a given IV, GCM; the smallest INT's abs.
    "SELECT schema_of_json('{\"id\": 1, \"tags\": [\"x\"], \"w\": 1.5}') AS s, from_json('{\"id\": 7, \"tags\": [\"p\"]}', schema_of_json('{\"id\": 1, \"tags\": [\"x\"]}')).id AS i, schema_of_csv('1,abc,2024-01-02') AS c, to_csv(named_struct('a', 1, 'b', 'x,y', 'c', CAST(NULL AS STRING), 'd', DATE'2024-01-02')) AS t, from_csv('5,\"p,q\",x', 'a INT, b STRING, c INT').b AS f, base64(aes_encrypt('ABC', '1234567890123456', 'ECB')) AS e, hex(aes_encrypt('Spark SQL', '0000111122223333', 'GCM', 'DEFAULT', unhex('000000000000000000000000'))) AS g, CAST(aes_decrypt(unbase64('y6Ss+zCYObpCbgfWfyNWTw=='), '1234567890123456', 'ECB') AS STRING) AS d, abs(-2147483648) AS m, length(X'00FF') AS l",
    # Spark's newer scalars: JSON keys as written, Java's regex positions, a distance
    # beyond its threshold, 0-based get, NULL-safe equality, DIV as a function, factorial
    # beyond a BIGINT, bitmap buckets and bits, the quarter in a date pattern, %e.
    "SELECT json_object_keys('{\"b\": 1, \"a\": {\"c\": 2}, \"b\": 3}') AS k, regexp_instr('abc123', '[0-9]+') AS r, levenshtein('kitten', 'sitting', 2) AS l, get(array(1, 2), 1) AS g, equal_null(NULL, NULL) AS e, div(-7, 2) AS d, factorial(21) AS f, bitmap_count(X'0F01') AS bc, bitmap_bit_position(32769) AS bp, bitmap_bucket_number(-5) AS bb, date_format(DATE '2024-05-07', 'yyyy QQQ') AS q, printf('%.2e', 12345.678D) AS p, make_valid_utf8('ok') AS u",
    # A group's bitmap, in Spark's bytes.
    "SELECT hex(substr(bitmap_construct_agg(bitmap_bit_position(x)), 1, 2)) AS b, bitmap_count(bitmap_or_agg(to_binary('0F', 'hex'))) AS o FROM VALUES (1), (10), (NULL) AS t(x)",
]
# Hive and Spark disagree here, or Spark spells it differently: Hive's answers only.
HIVE_ONLY = {
    # Spark 3 keeps the day; Hive moves a month's last day to the last day.
    "SELECT add_months('2024-02-29', 1) AS a": ["2024-03-31"],
    # java.util.Random(42)'s first number, as Hive's rand(42); Spark draws from another
    # generator.
    "SELECT rand(42) AS r": ["0.7275636800328681"],
    # Spark's VARCHAR(n) in a CAST is any string.
    "SELECT CAST('abcdef' AS VARCHAR(3)) AS v": ["abc"],
    # Hive's literals are DOUBLEs, so its bround answers one; Spark's are decimals.
    "SELECT bround(2.5) AS a, bround(8.25, 1) AS b, bround(15, -1) AS c": ["2.0", "8.2", "20"],
    # Spark's 2.675 is a decimal, which its printf's %f refuses; Hive's is a DOUBLE.
    "SELECT printf('%.2f', 2.675) AS f": ["2.68"],
    # Java's hashCode of the values, as Hive's; Spark's hash is Murmur3.
    "SELECT hash('abc') AS h, hash('a', 'b') AS g": ["96354", "3105"],
    # Spark has no field and no mask_first_n and its kin.
    "SELECT field('b', 'a', 'b', 'b') AS f, field(NULL, 'a') AS g, field('z', 'a') AS h": ["2", "0", "0"],
    "SELECT mask_first_n('1234-5678') AS a, mask_last_n('1234-5678', 2) AS b, mask_show_first_n('1234-5678') AS c, mask_show_last_n('AbCd', 1) AS d, mask_hash('abc') AS h": ["nnnn-5678", "1234-56nn", "1234-nnnn", "XxXd", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
    # Spark has no parse_url_tuple.
    "SELECT parse_url_tuple('http://u@a.com:80/p/q.html?k=1&j=2#r', 'HOST', 'PATH', 'QUERY:j', 'REF', 'QUERY:z') AS (h, p, j, r, z)": ["a.com", "/p/q.html", "2", "r", "NULL"],
    # Spark has no ngrams.
    "SELECT ngrams(sentences(lower('The cat sat. The cat ran! the cat sat')), 2, 2) AS g": ['[{"ngram":["the","cat"],"estfrequency":3.0},{"ngram":["cat","sat"],"estfrequency":2.0}]'],
    # Hive leaves out the nodes without a value (elements), as its documentation shows;
    # Spark keeps a NULL for each.
    "SELECT xpath('<a><b>b1</b><b>b2</b></a>', 'a/*') AS x": ["[]"],
    # Hive 3's x IS [NOT] TRUE|FALSE (Spark has no istrue and kin).
    "SELECT istrue(NULL) AS a, isfalse(1 > 2) AS b, isnottrue(NULL) AS c, isnotfalse(1 > 2) AS d": ["false", "true", "true", "false"],
    # Hive's >>> of an INT (Spark has no shiftrightunsigned).
    "SELECT shiftrightunsigned(CAST(-16 AS INT), 28) AS a, shiftrightunsigned(16, 2) AS b": ["15", "4"],
    # Spark has no context_ngrams.
    "SELECT context_ngrams(sentences(lower('I love cats. I love dogs! You love cats. i love cats')), array('i', 'love', NULL), 2) AS g": ['[{"ngram":["cats"],"estfrequency":2.0},{"ngram":["dogs"],"estfrequency":1.0}]'],
    # The session's user: beeline's here. (Spark's depends on how its engine runs.)
    "SELECT current_user() AS u": ["alice"],
}


def rows(run, statements):
    assert run.returncode == 0, run.describe()
    sets = run.result_sets()
    assert len(sets) == len(statements), run.describe()
    return {sql: result[1] for sql, result in zip(statements, sets)}


def test_hive_functions_answer_as_hive_through_the_gateway(kumiho, tmp_path):
    expected = {**FUNCTIONS, **HIVE_ONLY}
    statements = list(expected)
    answers = rows(run_beeline(binary_url(kumiho.port), statements), statements)
    for sql in statements:
        assert answers[sql] == expected[sql], sql


def test_show_partitions_and_tblproperties_through_the_gateway(kumiho, tmp_path):
    for partition in ("day=2024-01-01", "day=2024-01-02"):
        (tmp_path / "t" / partition).mkdir(parents=True)
        (tmp_path / "t" / partition / "0.csv").write_text("a\n1\n")
    statements = [
        f"CREATE EXTERNAL TABLE visits (a INT, day VARCHAR) STORED AS CSV PARTITIONED BY (day) LOCATION '{tmp_path / 't'}/' OPTIONS ('format.has_header' 'true')",
        "SHOW PARTITIONS visits",
        "SHOW TBLPROPERTIES visits",
        "SHOW PARTITIONS tpch.nation",
    ]
    run = run_beeline(binary_url(kumiho.port), statements)
    sets = run.result_sets()
    assert sets[1] == [["partition"], ["day=2024-01-01"], ["day=2024-01-02"]], run.describe()
    # The table's properties as Hive lists them (EXTERNAL, numFiles, totalSize...).
    assert sets[2][0] == ["prpt_name", "prpt_value"], run.describe()
    assert ["EXTERNAL", "TRUE"] in sets[2][1:], run.describe()
    # Beeline stops at the failing statement and prints the engine's reason.
    assert run.returncode != 0
    assert "table tpch.nation is not partitioned" in run.stderr + run.stdout, run.describe()


def test_function_errors_name_the_problem_through_the_gateway(kumiho):
    # Beeline stops at the failing statement and prints the engine's reason.
    statements = [
        "SELECT xpath_string('<a><b>1</b></aa>', 'a') AS x",
        "SELECT reflect('java.lang.Runtime', 'getRuntime') AS r",
    ]
    for sql, reason in zip(
        statements,
        [
            "xpath_string: the XML is malformed at line 1, column 14",
            "reflect: java.lang.Runtime.getRuntime() is not available in this engine",
        ],
    ):
        run = run_beeline(binary_url(kumiho.port), [sql])
        assert run.returncode != 0, run.describe()
        assert reason in run.stderr + run.stdout, run.describe()


@pytest.fixture
def spark_and_datafusion(start_kumiho, gateway_dirs):
    """A gateway whose sessions run on DataFusion, or on Spark with
    `kyuubi.engine.type=SPARK_SQL`; both read times in UTC. Spark runs without ANSI mode
    (Spark 4's default), as Hive answers: NULL for 1 / 0 or CAST('abc' AS INT), not an
    error. Spark engines stop with the test."""
    work_dir, cluster_dir = gateway_dirs
    hive_like = {"spark.sql.session.timeZone": "UTC", "spark.sql.ansi.enabled": "false"}
    (cluster_dir / "default.yaml").write_text(spark_cluster_yaml(conf=hive_like))
    gateway = start_kumiho()
    yield gateway
    stop_spark_engines(work_dir)


def test_generators_answer_as_the_spark_thrift_server(spark_and_datafusion):
    url = binary_url(spark_and_datafusion.port)
    spark = run_beeline(url + "?kyuubi.engine.type=SPARK_SQL", SPARK_ANSWERS)
    datafusion = run_beeline(url, SPARK_ANSWERS)
    assert spark.returncode == 0, spark.describe()
    assert datafusion.returncode == 0, datafusion.describe()
    for sql, theirs, ours in zip(SPARK_ANSWERS, spark.result_sets(), datafusion.result_sets()):
        assert ours == theirs, sql


# A session in Los Angeles: each conversion between a moment and a wall-clock time in the
# session's zone, set in the JDBC URL as an analyst would.
SESSION_ZONE_ANSWERS = [
    "SELECT from_unixtime(0) AS f, unix_timestamp('2024-07-01', 'yyyy-MM-dd') AS u, "
    "CAST(0 AS TIMESTAMP) AS c, CAST(TIMESTAMP '1970-01-01 00:00:00' AS BIGINT) AS b, "
    "to_unix_timestamp('2024-03-10 02:30:00') AS gap, current_timezone() AS z",
    "SELECT CAST('2024-07-01 12:00:00 Asia/Seoul' AS TIMESTAMP) AS s, "
    "timestamp_seconds(1704164645) AS t, "
    "make_timestamp(2024, 3, 10, 2, 30, 0, 'America/Los_Angeles') AS m, "
    "to_json(named_struct('t', TIMESTAMP '2024-07-01 12:00:00')) AS j",
    "SELECT date_format(TIMESTAMP '2024-07-01 12:34:00', 'yyyy-MM-dd HH:mm XXX') AS d, "
    "window(TIMESTAMP '2024-07-01 12:34:00', '1 hour').start AS w, "
    "hour(from_unixtime(1719835200)) AS h",
]


def test_a_session_time_zone_answers_as_the_spark_thrift_server(spark_and_datafusion):
    url = binary_url(spark_and_datafusion.port)
    zone = "spark.sql.session.timeZone=America/Los_Angeles"
    spark = run_beeline(f"{url}?kyuubi.engine.type=SPARK_SQL;{zone}", SESSION_ZONE_ANSWERS)
    datafusion = run_beeline(f"{url}?{zone}", SESSION_ZONE_ANSWERS)
    assert spark.returncode == 0, spark.describe()
    assert datafusion.returncode == 0, datafusion.describe()
    theirs, ours = spark.result_sets(), datafusion.result_sets()
    assert len(ours) == len(SESSION_ZONE_ANSWERS), datafusion.describe()
    for sql, their_rows, our_rows in zip(SESSION_ZONE_ANSWERS, theirs, ours):
        assert our_rows == their_rows, sql
    # Not UTC's answers: the zone was read.
    assert ours[0][1][0] == "1969-12-31 16:00:00", datafusion.describe()


def test_hive_functions_answer_as_the_spark_thrift_server(spark_and_datafusion):
    statements = list(FUNCTIONS)
    url = binary_url(spark_and_datafusion.port)
    spark = rows(run_beeline(url + "?kyuubi.engine.type=SPARK_SQL", statements), statements)
    datafusion = rows(run_beeline(url, statements), statements)
    for sql in statements:
        assert datafusion[sql] == spark[sql], sql


def test_unnamed_columns_alike_are_inserted_and_named_as_hive_names_them(kumiho):
    statements = [
        "CREATE TABLE dup_nulls (a STRING, b STRING)",
        "INSERT INTO dup_nulls SELECT NULL, NULL",
        "INSERT INTO dup_nulls SELECT 1, 1",
        "SELECT a, b FROM dup_nulls ORDER BY a NULLS FIRST",
        "SELECT NULL, NULL, 1, 1",
    ]
    run = run_beeline(binary_url(kumiho.port), statements)
    assert run.returncode == 0, run.describe()
    sets = run.result_sets()
    assert sets[-2] == [["a", "b"], ["NULL", "NULL"], ["1", "1"]], run.describe()
    # The first keeps Spark's name, the ones alike Hive's for their position.
    assert sets[-1][0] == ["NULL", "_c1", "1", "_c3"], run.describe()
