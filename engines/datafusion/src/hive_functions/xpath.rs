//! Hive's XPath functions, `xpath_*(xml, path)`: an XPath 1.0 expression evaluated over each
//! row's XML text, as Hive's `UDFXPathUtil` (and Spark's copy of it) evaluates it with
//! `javax.xml.xpath`, its value converted as Java converts it: `xpath` the values of the
//! nodes found, `xpath_string` the XPath `string()` of the value, `xpath_boolean` its
//! `boolean()`, and `xpath_short` ... `xpath_double` (`xpath_number`) its `number()` narrowed
//! as Java's `Double.intValue()` and kin narrow it.
//!
//! The XML is read as Java's default `DocumentBuilder` reads it, without namespaces
//! ([`without_namespaces`]): an element or attribute is matched by its local name whatever
//! its prefix or default namespace, so `/a/b` finds the `b` of `<a xmlns="urn:x">`.

use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, BooleanBuilder, Float32Builder, Float64Builder, Int16Builder, Int32Builder,
    Int64Builder, ListBuilder, StringBuilder,
};
use datafusion::arrow::datatypes::DataType;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::ScalarUDF;
use sxd_document::dom::{ChildOfElement, ChildOfRoot, Element};
use sxd_xpath::nodeset::Node;
use sxd_xpath::{Context, Factory, Value, XPath};

use super::encoding::strings_of;
use super::{bad_arguments, HiveFunction};

pub fn functions() -> Vec<ScalarUDF> {
    let function =
        |name, returns, compute| HiveFunction::computed(name, xpath_types, returns, compute);
    vec![
        function(
            "xpath",
            |_| Ok(DataType::new_list(DataType::Utf8, true)),
            xpath,
        )
        .udf(),
        function("xpath_string", |_| Ok(DataType::Utf8), xpath_string).udf(),
        function("xpath_boolean", |_| Ok(DataType::Boolean), xpath_boolean).udf(),
        function("xpath_short", |_| Ok(DataType::Int16), xpath_short).udf(),
        function("xpath_int", |_| Ok(DataType::Int32), xpath_int).udf(),
        function("xpath_long", |_| Ok(DataType::Int64), xpath_long).udf(),
        function("xpath_float", |_| Ok(DataType::Float32), xpath_float).udf(),
        function("xpath_double", |_| Ok(DataType::Float64), xpath_double)
            .with_aliases(&["xpath_number"])
            .udf(),
    ]
}

fn xpath_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    let string = |t: &DataType| super::is_string(t) || t.is_null();
    match types {
        [xml, path] if string(xml) && string(path) => Ok(vec![DataType::Utf8; 2]),
        _ => Err(bad_arguments(name, "(xml string, XPath string)", types)),
    }
}

/// `xpath(xml, path)`: the values of the nodes found, in document order: an attribute's
/// value, a text's, a comment's or a processing instruction's; an element has none and is
/// left out, as Hive leaves it out (`xpath('<a><b>1</b></a>', 'a/*')` is `[]`).
fn xpath(args: &[ArrayRef]) -> Result<ArrayRef> {
    let mut out = ListBuilder::new(StringBuilder::new());
    let mut not_nodes = None;
    evaluate("xpath", args, |value| match value {
        None => out.append_null(),
        Some(Value::Nodeset(nodes)) => {
            for node in nodes.document_order() {
                if let Some(text) = node_value(node) {
                    out.values().append_value(text);
                }
            }
            out.append(true);
        }
        Some(other) => {
            not_nodes.get_or_insert(other.into_string());
            out.append(true);
        }
    })?;
    // A number, string or boolean is no list of nodes: Java's evaluation as NODESET fails,
    // and so does Hive's and Spark's xpath.
    if let Some(value) = not_nodes {
        return Err(DataFusionError::Execution(format!(
            "xpath: the XPath expression gives a value ('{value}'), not nodes; \
             xpath_string, xpath_double or xpath_boolean answer a value"
        )));
    }
    Ok(Arc::new(out.finish()))
}

/// A node's value as the DOM's `Node.getNodeValue()` gives it; `None` for an element or
/// the document, which have none.
fn node_value(node: Node) -> Option<String> {
    match node {
        Node::Attribute(attribute) => Some(attribute.value().to_owned()),
        Node::Text(text) => Some(text.text().to_owned()),
        Node::Comment(comment) => Some(comment.text().to_owned()),
        Node::ProcessingInstruction(pi) => Some(pi.value().unwrap_or_default().to_owned()),
        Node::Namespace(namespace) => Some(namespace.uri().to_owned()),
        Node::Root(_) | Node::Element(_) => None,
    }
}

/// `xpath_string(xml, path)`: the XPath `string()` of the value: the text of the first node
/// found, `''` when none is.
fn xpath_string(args: &[ArrayRef]) -> Result<ArrayRef> {
    let mut out = StringBuilder::new();
    evaluate("xpath_string", args, |value| {
        out.append_option(value.map(|v| match v {
            Value::Number(x) => number_text(x),
            other => other.into_string(),
        }))
    })?;
    Ok(Arc::new(out.finish()))
}

/// A number as XPath's `string()` writes it (as Java's `XNumber` does): no exponent, no
/// fraction for an integer, `0` for negative zero.
fn number_text(x: f64) -> String {
    if x == 0.0 {
        "0".to_owned()
    } else if x.is_infinite() {
        if x > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
    } else {
        // Rust writes the shortest digits that read back, without an exponent, as XPath.
        x.to_string()
    }
}

fn xpath_boolean(args: &[ArrayRef]) -> Result<ArrayRef> {
    let mut out = BooleanBuilder::new();
    evaluate("xpath_boolean", args, |value| {
        out.append_option(value.map(|v| v.boolean()))
    })?;
    Ok(Arc::new(out.finish()))
}

/// The `number()` of each row's value, narrowed by `narrow` into `out`.
macro_rules! numbers {
    ($name:literal, $args:expr, $builder:ty, $narrow:expr) => {{
        let mut out = <$builder>::new();
        evaluate($name, $args, |value| {
            out.append_option(value.map(|v| $narrow(number(&v))))
        })?;
        Ok(Arc::new(out.finish()))
    }};
}

// Java's narrowing: NaN is 0 and a number beyond the type's range its bound (`Double.intValue`,
// `longValue`); `shortValue` is the `int` cut to 16 bits, as Java's `(short) (int) d`.
fn xpath_short(args: &[ArrayRef]) -> Result<ArrayRef> {
    numbers!("xpath_short", args, Int16Builder, |x: f64| x as i32 as i16)
}

fn xpath_int(args: &[ArrayRef]) -> Result<ArrayRef> {
    numbers!("xpath_int", args, Int32Builder, |x: f64| x as i32)
}

fn xpath_long(args: &[ArrayRef]) -> Result<ArrayRef> {
    numbers!("xpath_long", args, Int64Builder, |x: f64| x as i64)
}

fn xpath_float(args: &[ArrayRef]) -> Result<ArrayRef> {
    numbers!("xpath_float", args, Float32Builder, |x: f64| x as f32)
}

fn xpath_double(args: &[ArrayRef]) -> Result<ArrayRef> {
    numbers!("xpath_double", args, Float64Builder, |x: f64| x)
}

/// XPath's `number()` of a value, a text read as Java's XPath reads it
/// ([`java_number`]).
fn number(value: &Value) -> f64 {
    match value {
        Value::Number(x) => *x,
        Value::Boolean(b) => f64::from(u8::from(*b)),
        other => java_number(&other.string()),
    }
}

/// A text's number as Java's XPath reads it: digits with an optional `-` and `.`, spaces
/// around; anything else (`1e3`, `+3`, `Infinity`) is NaN, where Rust would read them.
fn java_number(text: &str) -> f64 {
    let text = text.trim_matches(|c: char| c <= ' ');
    if text.is_empty()
        || !text
            .chars()
            .all(|c| c == '-' || c == '.' || c.is_ascii_digit())
    {
        return f64::NAN;
    }
    text.parse().unwrap_or(f64::NAN)
}

/// Evaluates each row's XPath over its XML and hands `answer` the value: `None` for a NULL or
/// empty XML or path, as Spark answers them. A path is compiled once for the rows that share
/// it. Malformed XML or an invalid path fails the query, saying which and where.
fn evaluate(name: &str, args: &[ArrayRef], mut answer: impl FnMut(Option<Value>)) -> Result<()> {
    let (xmls, paths) = (strings_of(&args[0]), strings_of(&args[1]));
    let factory = Factory::new();
    let mut compiled: Option<(&str, XPath)> = None;
    for (xml, path) in xmls.into_iter().zip(paths) {
        let (Some(xml), Some(path)) = (xml, path) else {
            answer(None);
            continue;
        };
        if xml.is_empty() || path.is_empty() {
            answer(None);
            continue;
        }
        if compiled.as_ref().is_none_or(|(p, _)| *p != path) {
            compiled = Some((path, compile(name, &factory, path)?));
        }
        let (_, xpath) = compiled.as_ref().expect("compiled above");
        let package = sxd_document::parser::parse(xml).map_err(|e| malformed(name, xml, &e))?;
        let document = package.as_document();
        without_namespaces(document.root().children());
        let value = xpath
            .evaluate(&Context::new(), document.root())
            .map_err(|e| {
                DataFusionError::Execution(format!(
                    "{name}: the XPath expression '{path}' cannot be evaluated: {e}"
                ))
            })?;
        answer(Some(value));
    }
    Ok(())
}

fn compile(name: &str, factory: &Factory, path: &str) -> Result<XPath> {
    let invalid = |why: String| {
        DataFusionError::Execution(format!(
            "{name}: '{path}' is not a valid XPath 1.0 expression: {why}"
        ))
    };
    factory
        .build(path)
        .map_err(|e| invalid(e.to_string()))?
        .ok_or_else(|| invalid("it is empty".into()))
}

/// The error for XML that does not parse: the caller's data. It says where (line and column)
/// and what the parser expected, and shows the start of the text.
fn malformed(name: &str, xml: &str, error: &sxd_document::parser::Error) -> DataFusionError {
    let mut at = error.location().min(xml.len());
    while !xml.is_char_boundary(at) {
        at -= 1;
    }
    let before = &xml[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    // sxd's errors print as `XML parsing error at N: {ExpectedElementEnd, ...}`: the names,
    // in words.
    let shown = error.to_string();
    let problems = shown
        .split_once(": ")
        .map_or(shown.as_str(), |(_, names)| names)
        .trim_matches(|c| c == '{' || c == '}');
    let mut problem = String::new();
    for c in problems.chars() {
        if c.is_ascii_uppercase() {
            if !problem.is_empty() && !problem.ends_with(' ') {
                problem.push(' ');
            }
            problem.push(c.to_ascii_lowercase());
        } else {
            problem.push(c);
        }
    }
    let start: String = xml.chars().take(60).collect();
    let more = if start.len() < xml.len() { "..." } else { "" };
    DataFusionError::Execution(format!(
        "{name}: the XML is malformed at line {line}, column {column} ({problem}); \
         the text begins '{start}{more}'"
    ))
}

/// Makes a parsed document look as Java's default (not namespace-aware) parser gives it to
/// XPath: every element and attribute named by its local name without a namespace, and an
/// element's attributes in the order of their names, as Xerces keeps them.
fn without_namespaces(children: Vec<ChildOfRoot>) {
    let mut elements: Vec<Element> = children
        .into_iter()
        .filter_map(|child| child.element())
        .collect();
    // A stack, not recursion: a deeply nested document must not overflow the thread's stack.
    while let Some(element) = elements.pop() {
        let name = element.name();
        if name.namespace_uri().is_some() {
            element.set_name(name.local_part());
        }
        let attributes = element.attributes();
        let namespaced = attributes
            .iter()
            .any(|a| a.name().namespace_uri().is_some());
        // sxd-xpath puts an element's attributes in document order from its last, so the
        // names are kept in descending order for XPath to see them ascending.
        let ordered = attributes
            .windows(2)
            .all(|pair| pair[0].name().local_part() >= pair[1].name().local_part());
        if namespaced || !ordered {
            let mut values: Vec<(String, String)> = attributes
                .iter()
                .map(|a| (a.name().local_part().to_owned(), a.value().to_owned()))
                .collect();
            for attribute in &attributes {
                element.remove_attribute(attribute.name());
            }
            values.sort_by(|a, b| b.cmp(a));
            for (name, value) in &values {
                element.set_attribute_value(name.as_str(), value);
            }
        }
        elements.extend(
            element
                .children()
                .into_iter()
                .filter_map(|child| match child {
                    ChildOfElement::Element(e) => Some(e),
                    _ => None,
                }),
        );
    }
}
