//! The address of an HTTP client behind a proxy: read from the header the proxy writes it into (Kyuubi's `kyuubi.frontend.proxy.http.client.ip.header`), else the TCP peer.
//!
//! Behind a load balancer every HTTP client's TCP peer is the balancer, so sessions would be
//! listed, counted and denied by the balancer's address. A proxy in front of the gateway
//! records the client's address in a header (`X-Real-IP`, `X-Forwarded-For`); the operator
//! names that header, and only then is it read, since any client that reaches the gateway
//! directly can write the header too. Of a list (`X-Forwarded-For: client, proxy1`) the last
//! entry is taken: the one the proxy in front of the gateway added, which a client cannot
//! forge through it (the first entries are whatever the client sent).

use std::net::{IpAddr, SocketAddr};

use hyper::header::{HeaderMap, HeaderName};

/// The client's address: `header`'s last entry when it is set and holds an IP address (with
/// or without a port, IPv6 with or without brackets), else `peer`. The port is always the
/// peer's: the header's says nothing about this connection.
pub fn client_address(
    headers: &HeaderMap,
    header: Option<&HeaderName>,
    peer: SocketAddr,
) -> SocketAddr {
    let Some(header) = header else {
        return peer;
    };
    let last = headers
        .get_all(header)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .rfind(|entry| !entry.is_empty());
    match last.and_then(parse_address) {
        Some(ip) => SocketAddr::new(ip.to_canonical(), peer.port()),
        None => {
            if let Some(entry) = last {
                tracing::debug!(%peer, header = %header, entry, "the client address header holds no IP address; using the peer's");
            }
            peer
        }
    }
}

/// `10.1.2.3`, `10.1.2.3:5000`, `::1`, `[::1]`, `[::1]:5000`.
fn parse_address(entry: &str) -> Option<IpAddr> {
    if let Ok(ip) = entry.parse::<IpAddr>() {
        return Some(ip);
    }
    if let Ok(address) = entry.parse::<SocketAddr>() {
        return Some(address.ip());
    }
    entry
        .strip_prefix('[')
        .and_then(|rest| rest.strip_suffix(']'))
        .and_then(|inner| inner.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    fn with(name: &'static str, values: &[&'static str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(name, HeaderValue::from_static(value));
        }
        headers
    }

    const PEER: &str = "192.168.1.1:40000";

    fn address(headers: &HeaderMap, header: Option<&'static str>) -> String {
        let header = header.map(HeaderName::from_static);
        client_address(headers, header.as_ref(), PEER.parse().unwrap()).to_string()
    }

    #[test]
    fn the_header_is_read_only_when_the_operator_names_it() {
        let headers = with("x-real-ip", &["10.1.2.3"]);
        assert_eq!(address(&headers, None), PEER);
        assert_eq!(address(&headers, Some("x-real-ip")), "10.1.2.3:40000");
        assert_eq!(address(&headers, Some("x-forwarded-for")), PEER);
    }

    #[test]
    fn of_a_list_the_entry_the_nearest_proxy_added_counts() {
        let headers = with("x-forwarded-for", &["6.6.6.6, 10.1.2.3"]);
        assert_eq!(address(&headers, Some("x-forwarded-for")), "10.1.2.3:40000");
        let repeated = with("x-forwarded-for", &["6.6.6.6", "10.1.2.4"]);
        assert_eq!(
            address(&repeated, Some("x-forwarded-for")),
            "10.1.2.4:40000"
        );
    }

    #[test]
    fn ports_brackets_and_mapped_addresses_are_read_and_garbage_is_not() {
        let read = |value: &'static str| address(&with("x-real-ip", &[value]), Some("x-real-ip"));
        assert_eq!(read("10.1.2.3:5000"), "10.1.2.3:40000");
        assert_eq!(read("[2001:db8::1]:5000"), "[2001:db8::1]:40000");
        assert_eq!(read("[2001:db8::1]"), "[2001:db8::1]:40000");
        assert_eq!(read("::ffff:10.1.2.3"), "10.1.2.3:40000");
        assert_eq!(read("unknown"), PEER);
        assert_eq!(read(""), PEER);
    }
}
