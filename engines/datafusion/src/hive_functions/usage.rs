//! What `DESCRIBE FUNCTION` says of each Hive function: its call and what it returns.

use std::sync::OnceLock;

use datafusion::logical_expr::{DocSection, Documentation};

/// `(name, call, what it returns)`, in Hive's words where Hive has them.
const USAGE: &[(&str, &str, &str)] = &[
    ("if", "if(cond, a, b)", "a when cond is true, else b (only the branch taken is evaluated)"),
    ("isnull", "isnull(x)", "true when x is NULL"),
    ("isnotnull", "isnotnull(x)", "true when x is not NULL"),
    ("year", "year(date)", "the year of a date, timestamp or date string"),
    ("quarter", "quarter(date)", "the quarter of the year, 1 to 4"),
    ("month", "month(date)", "the month, 1 to 12"),
    ("day", "day(date)", "the day of the month"),
    ("hour", "hour(timestamp)", "the hour, 0 to 23"),
    ("minute", "minute(timestamp)", "the minute"),
    ("second", "second(timestamp)", "the second, its fraction dropped"),
    ("weekofyear", "weekofyear(date)", "the ISO week of the year (weeks start on Monday)"),
    ("dayofyear", "dayofyear(date)", "the day of the year, from 1"),
    ("dayofweek", "dayofweek(date)", "the day of the week, 1 = Sunday to 7 = Saturday"),
    ("datediff", "datediff(enddate, startdate)", "the days from startdate to enddate"),
    ("date_add", "date_add(date, days)", "the date days later"),
    ("date_sub", "date_sub(date, days)", "the date days earlier"),
    ("add_months", "add_months(date, months)", "the date months later; a month's last day gives the last day"),
    ("last_day", "last_day(date)", "the last day of the date's month"),
    ("months_between", "months_between(date1, date2[, round])", "the months from date2 to date1, in months of 31 days beyond whole months"),
    ("trunc", "trunc(date, 'YEAR'|'Q'|'MM'|'WEEK') or trunc(number[, digits])", "the first day of the date's year, quarter, month or week; or the number truncated"),
    ("from_utc_timestamp", "from_utc_timestamp(timestamp, 'zone')", "the wall-clock time in the zone of a UTC timestamp"),
    ("to_utc_timestamp", "to_utc_timestamp(timestamp, 'zone')", "the UTC time of a wall-clock timestamp in the zone"),
    ("to_date", "to_date(x[, 'pattern'])", "the date of a timestamp or string (NULL if it is none), read with a Java pattern when given"),
    ("date_format", "date_format(timestamp, 'pattern')", "the timestamp as text in a Java pattern such as 'yyyy-MM-dd HH:mm:ss'"),
    ("from_unixtime", "from_unixtime(seconds[, 'pattern'])", "the time seconds after 1970-01-01 00:00:00 UTC as text, 'yyyy-MM-dd HH:mm:ss' by default"),
    ("unix_timestamp", "unix_timestamp([x[, 'pattern']])", "the seconds since 1970-01-01 00:00:00 UTC of x (read with the pattern), or of now"),
    ("concat", "concat(a, b, ...)", "the strings (or arrays) joined; NULL when any is NULL"),
    ("substr", "substr(s, pos[, len])", "the len characters of s from pos (from 1; negative counts from the end)"),
    ("split", "split(s, regex)", "the array of the pieces of s between matches of regex"),
    ("regexp_extract", "regexp_extract(s, regex[, group])", "the group (1 by default, 0 the whole match) of the first match, '' without one"),
    ("regexp_replace", "regexp_replace(s, regex, replacement)", "s with every match of regex replaced ($1 is group 1)"),
    ("sha2", "sha2(s, bits)", "the SHA-2 digest (224, 256, 384 or 512 bits) of s in hex"),
    ("space", "space(n)", "a string of n spaces"),
    ("hex", "hex(x)", "an integer's hex digits, or a string's or binary's bytes in hex, upper case"),
    ("base64", "base64(binary)", "the bytes in base 64, padded with ="),
    ("elt", "elt(n, s1, s2, ...)", "the nth string (from 1), NULL for n out of range"),
    ("parse_url", "parse_url(url, 'HOST'|'PATH'|'QUERY'|'REF'|'PROTOCOL'|'FILE'|'AUTHORITY'|'USERINFO'[, key])", "a part of a URL; with QUERY and a key, that parameter's value"),
    ("locate", "locate(substr, s[, pos])", "the position (from 1) of the first substr in s from pos, 0 if none"),
    ("get_json_object", "get_json_object(json, '$.path')", "the value at a JSONPath in a JSON text, a string as it is, others as JSON"),
    ("size", "size(array or map)", "the number of elements, -1 for NULL"),
    ("str_to_map", "str_to_map(text[, pairs_delimiter[, key_delimiter]])", "the map of the text's key:value pairs (',' and ':' by default)"),
    ("sort_array", "sort_array(array[, ascending])", "the array sorted, NULLs first ascending"),
    ("pmod", "pmod(a, b)", "a modulo b, never negative for a positive b"),
    ("bround", "bround(x[, d])", "x rounded to d decimal places (0 by default), half to even"),
    ("format_number", "format_number(x, d)", "x with d decimal places (half to even) and its digits grouped by commas, as '#,###,###.##'"),
    ("next_day", "next_day(date, 'MO'|'TUE'|'WEDNESDAY'|...)", "the first date after date that falls on the day named"),
    ("conv", "conv(num, from_base, to_base)", "num's digits in from_base written in to_base (negative: signed)"),
    ("bin", "bin(n)", "the binary digits of a BIGINT"),
    ("unhex", "unhex(s)", "the bytes of a string of hex digits, NULL if it holds another character"),
    ("unbase64", "unbase64(s)", "the bytes of base 64 text"),
    ("sha1", "sha1(x)", "the SHA-1 digest of a string or binary, in hex"),
    ("crc32", "crc32(x)", "the CRC-32 of a string or binary, a BIGINT"),
    ("soundex", "soundex(s)", "the American Soundex code of s"),
    ("printf", "printf(format, value, ...)", "the values written into the format as Java's String.format writes them (%s, %d, %f, %x, ...)"),
    ("hash", "hash(a, ...)", "Hive's INT hash of the values (Java's hashCode of each, combined as 31 * h + next)"),
    ("explode", "explode(array or map)", "a row per element (col), or per entry of a map (key, value)"),
    ("posexplode", "posexplode(array)", "a row per element: its position from 0 (pos) and the element (val)"),
    ("json_tuple", "json_tuple(json, key1, key2, ...)", "a row of the keys' values in a JSON object (c0, c1, ...), strings, NULL for a missing key or text that is no JSON object"),
    ("parse_url_tuple", "parse_url_tuple(url, part1, part2, ...)", "a row of the URL's parts (c0, c1, ...): HOST, PATH, QUERY, QUERY:key, REF, PROTOCOL, FILE, AUTHORITY, USERINFO"),
    ("stack", "stack(n, v1, v2, ...)", "the values in n rows (col0, col1, ...), NULL where they run out"),
    ("inline", "inline(array of structs)", "a row per struct, a column per field"),
    ("generator_field", "generator_field(struct, i, count)", "the field i (from 0) of a struct of count fields, as the generators inline, json_tuple and parse_url_tuple read their structs"),
    ("field", "field(x, v1, v2, ...)", "the position (from 1) of the first v equal to x, 0 if none or x is NULL"),
    ("width_bucket", "width_bucket(value, min, max, n)", "the bucket (1 to n) of n equal ones from min to max holding value, 0 below, n + 1 above"),
    ("mask", "mask(s[, upper, lower, digit, other])", "s with upper-case letters as X, lower-case as x, digits as n (or the characters given)"),
    ("mask_first_n", "mask_first_n(s[, n[, upper, lower, digit, other]])", "s with its first n (4) characters masked as mask does"),
    ("mask_last_n", "mask_last_n(s[, n[, upper, lower, digit, other]])", "s with its last n (4) characters masked as mask does"),
    ("mask_show_first_n", "mask_show_first_n(s[, n[, upper, lower, digit, other]])", "s masked as mask does but for its first n (4) characters"),
    ("mask_show_last_n", "mask_show_last_n(s[, n[, upper, lower, digit, other]])", "s masked as mask does but for its last n (4) characters"),
    ("mask_hash", "mask_hash(s)", "the SHA-256 digest of s in hex"),
    ("encode", "encode(s, 'UTF-8'|'US-ASCII'|'ISO-8859-1'|'UTF-16'|'UTF-16BE'|'UTF-16LE'|'hex'|'base64')", "the bytes of s in the charset (or, for hex and base64, its bytes as that text)"),
    ("decode", "decode(binary, 'UTF-8'|'US-ASCII'|'ISO-8859-1'|'UTF-16'|'UTF-16BE'|'UTF-16LE'|'hex'|'base64')", "the text of the bytes in the charset (or the bytes of hex or base64 text)"),
    ("sentences", "sentences(text[, lang[, country]])", "the text's sentences, each an array of its words"),
    ("ngrams", "ngrams(sentences, n, k[, pf])", "the group's k most frequent n-grams of words with their estimated frequencies"),
    ("context_ngrams", "context_ngrams(sentences, array(word or NULL, ...), k[, pf])", "the group's k most frequent n-grams of words found in the NULLs of the context where its words match, with their estimated frequencies"),
    ("histogram_numeric", "histogram_numeric(x, b)", "a histogram of the group's numbers in at most b bins, an array of (x, y): centre and height"),
    ("xpath", "xpath(xml, xpath)", "the values of the nodes the XPath expression finds in the XML (attributes' and texts'), an array of strings"),
    ("xpath_string", "xpath_string(xml, xpath)", "the text of the first node the XPath expression finds in the XML, '' if none"),
    ("xpath_boolean", "xpath_boolean(xml, xpath)", "true when the XPath expression finds a node in the XML, or its value is true"),
    ("xpath_short", "xpath_short(xml, xpath)", "the number the XPath expression gives over the XML, as a SMALLINT (0 if it is no number)"),
    ("xpath_int", "xpath_int(xml, xpath)", "the number the XPath expression gives over the XML, as an INT (0 if it is no number)"),
    ("xpath_long", "xpath_long(xml, xpath)", "the number the XPath expression gives over the XML, as a BIGINT (0 if it is no number)"),
    ("xpath_float", "xpath_float(xml, xpath)", "the number the XPath expression gives over the XML, as a FLOAT (NaN if it is no number)"),
    ("xpath_double", "xpath_double(xml, xpath) or xpath_number(xml, xpath)", "the number the XPath expression gives over the XML, as a DOUBLE (NaN if it is no number)"),
    ("reflect", "reflect(class, method[, argument, ...]) or java_method(...)", "the value of the Java static method as a string, for the methods this engine knows (java.lang.Math, String.valueOf, Integer, Long, Double, Boolean, java.util.UUID, java.net.URLEncoder and URLDecoder)"),
    ("url_encode", "url_encode(s)", "s in application/x-www-form-urlencoded form (UTF-8), as Java's URLEncoder writes it"),
    ("url_decode", "url_decode(s)", "the text of application/x-www-form-urlencoded s (UTF-8), as Java's URLDecoder reads it; an error for a bad % escape"),
    ("try_url_decode", "try_url_decode(s)", "url_decode(s), NULL for a bad % escape"),
    ("shiftrightunsigned", "shiftrightunsigned(a, b)", "the INT or BIGINT a shifted right by b bits, zeros shifted in (Java's >>>)"),
    ("bit_count", "bit_count(x)", "the bits set in the integer (as a BIGINT) or boolean"),
    ("bit_get", "bit_get(x, pos) or getbit(x, pos)", "the bit at pos (0 the lowest) of the integer, 0 or 1"),
    ("regexp_extract_all", "regexp_extract_all(s, regex[, group])", "the group (1 by default, 0 the whole match) of every match, an array of strings"),
    ("array_size", "array_size(array)", "the number of elements of the array"),
    ("map_contains_key", "map_contains_key(map, key)", "true when the map has the key"),
    ("try_divide", "try_divide(a, b)", "a / b as a DOUBLE, NULL when b is 0"),
    ("count_if", "count_if(condition)", "the number of the group's rows where the condition is true"),
    ("e", "e()", "the base of natural logarithms"),
    ("negative", "negative(x)", "-x"),
    ("positive", "positive(x)", "x"),
    ("shiftleft", "shiftleft(a, b)", "the INT or BIGINT a shifted left by b bits"),
    ("shiftright", "shiftright(a, b)", "the INT or BIGINT a shifted right by b bits, its sign kept"),
    ("rand", "rand([seed])", "a random DOUBLE from 0 to 1; with a seed, the numbers of java.util.Random(seed), one per row, as Hive's"),
    ("collect_list", "collect_list(x)", "the group's non-NULL values as an array"),
    ("collect_set", "collect_set(x)", "the group's distinct non-NULL values as an array"),
];

/// The documentation of a Hive function, or `None` for a name without usage.
pub fn documentation(name: &str) -> Option<&'static Documentation> {
    static DOCS: OnceLock<Vec<(&'static str, Documentation)>> = OnceLock::new();
    DOCS.get_or_init(|| {
        let section = || DocSection {
            include: false,
            label: "Hive functions",
            description: None,
        };
        USAGE
            .iter()
            .map(|(name, call, returns)| {
                (
                    *name,
                    Documentation::builder(section(), *returns, *call).build(),
                )
            })
            .collect()
    })
    .iter()
    .find(|(n, _)| *n == name)
    .map(|(_, doc)| doc)
}
