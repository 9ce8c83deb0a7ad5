//! `GET /api/v1/admin/server`: the gateways registered in the HA ZooKeeper namespace, as Kyuubi's `ServerData`; without HA, this gateway alone.
//!
//! As Kyuubi's `AdminResource.listServers`: every child of `/{ha-namespace}` is a gateway,
//! its node name's `key=value` fields are the `attributes`, and its data (the keys Hive
//! JDBC reads, [`crate::discovery`]) give the host and port. Each listing opens a ZooKeeper
//! session of its own, closed when the listing ends: an administrator's call is rare, and the
//! registration's session belongs to its keeper.

use std::collections::BTreeMap;

use futures::future::join_all;
use zookeeper_client as zk;

use super::results::ServerData;
use crate::discovery::{Advertised, Ensemble};
use crate::errors::GatewayError;

/// Kyuubi's status of a listed server: its node lives only while the gateway does.
const RUNNING: &str = "Running";

/// Where to find the gateways that serve together.
pub struct GatewayDirectory {
    /// What this gateway registers (or would).
    pub advertised: Advertised,
    /// The HA ensemble and namespace, with `ha-addresses`.
    pub ha: Option<(Ensemble, String)>,
}

impl GatewayDirectory {
    /// The gateways registered now, in ZooKeeper's order of their nodes (the order of their
    /// registration); without HA, this gateway alone, unregistered (no namespace, no sequence).
    pub async fn list(&self) -> Result<Vec<ServerData>, GatewayError> {
        let Some((ensemble, namespace)) = &self.ha else {
            let node_name = self.advertised.node_prefix();
            let node_name = node_name.trim_end_matches(";sequence=");
            let own = server_data("", node_name, &self.advertised.node_data());
            return Ok(own.into_iter().collect());
        };
        let unavailable = |reason: String| {
            GatewayError::Upstream(format!(
                "cannot list the gateways registered under /{namespace} in the HA ZooKeeper ensemble {}: {reason}",
                ensemble.addresses
            ))
        };
        let client = ensemble.connect().await.map_err(unavailable)?;
        let listing = read_namespace(&client, namespace);
        match tokio::time::timeout(ensemble.connect_timeout, listing).await {
            Ok(Ok(servers)) => Ok(servers),
            Ok(Err(e)) => Err(unavailable(e.to_string())),
            Err(_) => Err(unavailable(format!(
                "no answer within {}",
                crate::duration::format(ensemble.connect_timeout)
            ))),
        }
    }
}

/// The registrations under `/{namespace}`; a node gone between the listing and its read (a
/// gateway stopping) is left out, and so is a node that is no gateway's.
async fn read_namespace(
    client: &zk::Client,
    namespace: &str,
) -> Result<Vec<ServerData>, zk::Error> {
    let parent = format!("/{namespace}");
    let mut children = match client.list_children(&parent).await {
        Ok(children) => children,
        // No gateway has registered yet.
        Err(zk::Error::NoNode) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    children.sort_by(|a, b| sequence(a).cmp(sequence(b)).then_with(|| a.cmp(b)));
    let parent = parent.as_str();
    let reads = children.iter().map(|child| async move {
        match client.get_data(&format!("{parent}/{child}")).await {
            Ok((data, _)) => Ok(server_data(parent, child, &String::from_utf8_lossy(&data))),
            Err(zk::Error::NoNode) => Ok(None),
            Err(e) => Err(e),
        }
    });
    let mut servers = Vec::with_capacity(children.len());
    for read in join_all(reads).await {
        match read? {
            Some(server) => servers.push(server),
            None => {
                tracing::debug!(%parent, "a node left out of the gateways: gone, or not a gateway's")
            }
        }
    }
    Ok(servers)
}

/// The `sequence=` ZooKeeper appended to a node name (registration order).
fn sequence(node_name: &str) -> &str {
    fields(node_name)
        .get("sequence")
        .copied()
        .unwrap_or_default()
}

/// One registration as Kyuubi's `ServerData`: the attributes from its name, host and port from
/// its data (the binary port, else the HTTP port of an HTTP registration), else from its
/// `serverUri`. `None` for a node that names no address.
fn server_data(namespace: &str, node_name: &str, data: &str) -> Option<ServerData> {
    let attributes = fields(node_name);
    let advertised = fields(data);
    let from_data = advertised
        .get("hive.server2.thrift.bind.host")
        .zip(
            advertised
                .get("hive.server2.thrift.port")
                .or_else(|| advertised.get("hive.server2.thrift.http.port")),
        )
        .and_then(|(host, port)| Some((host.to_string(), port.parse().ok()?)));
    let from_uri = || {
        let (host, port) = attributes.get("serverUri")?.rsplit_once(':')?;
        Some((host.to_owned(), port.parse().ok()?))
    };
    let (host, port): (String, u16) = from_data.or_else(from_uri)?;
    Some(ServerData {
        node_name: node_name.to_owned(),
        namespace: namespace.to_owned(),
        instance: format!("{host}:{port}"),
        host,
        port,
        attributes: attributes
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value.to_owned()))
            .collect(),
        status: RUNNING,
    })
}

/// `key=value` pairs separated by `;`, as registrations write node names and data.
fn fields(text: &str) -> BTreeMap<&str, &str> {
    text.split(';')
        .filter_map(|pair| pair.split_once('='))
        .collect()
}

/// A gateway on `host`'s 10009 (binary) and 10010 (HTTP), version 1.2.0, for tests.
#[cfg(test)]
pub(super) fn advertised_for_tests(
    host: &str,
    transport: crate::config::HaTransportMode,
) -> Advertised {
    Advertised {
        host: host.to_owned(),
        binary_port: 10009,
        http_port: 10010,
        http_path: "cliservice".to_owned(),
        transport,
        version: "1.2.0".to_owned(),
        checks_passwords: false,
        kerberos_principal: None,
        use_ssl: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::HaTransportMode;

    fn advertised(transport: HaTransportMode) -> Advertised {
        advertised_for_tests("gw1.example.com", transport)
    }

    #[test]
    fn a_registration_reads_as_kyuubis_server_data() {
        let binary = advertised(HaTransportMode::Binary);
        let name = format!("{}0000000007", binary.node_prefix());
        let server = server_data("/kumiho", &name, &binary.node_data()).unwrap();
        assert_eq!(
            server,
            ServerData {
                node_name: name,
                namespace: "/kumiho".to_owned(),
                instance: "gw1.example.com:10009".to_owned(),
                host: "gw1.example.com".to_owned(),
                port: 10009,
                attributes: BTreeMap::from([
                    ("serverUri".to_owned(), "gw1.example.com:10009".to_owned()),
                    ("version".to_owned(), "1.2.0".to_owned()),
                    ("sequence".to_owned(), "0000000007".to_owned()),
                ]),
                status: "Running",
            }
        );
        let http = advertised(HaTransportMode::Http);
        let server = server_data("/kumiho", &http.node_prefix(), &http.node_data()).unwrap();
        assert_eq!(server.instance, "gw1.example.com:10010");
    }

    #[tokio::test]
    async fn an_ensemble_that_does_not_answer_is_named_in_the_answer() {
        let unused = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = unused.local_addr().unwrap().to_string();
        drop(unused);
        let directory = GatewayDirectory {
            advertised: advertised(HaTransportMode::Binary),
            ha: Some((
                Ensemble {
                    addresses: address.clone(),
                    session_timeout: std::time::Duration::from_secs(2),
                    connect_timeout: std::time::Duration::from_millis(300),
                },
                "kumiho".to_owned(),
            )),
        };
        let error = directory.list().await.unwrap_err();
        assert!(matches!(error, GatewayError::Upstream(_)), "{error:?}");
        let message = error.to_string();
        assert!(
            message.contains("/kumiho") && message.contains(&address),
            "{message}"
        );
    }

    #[test]
    fn a_node_without_data_is_read_by_its_uri_and_one_without_an_address_is_left_out() {
        let server =
            server_data("/ns", "serverUri=10.0.0.5:10009;version=1;sequence=1", "").unwrap();
        assert_eq!((server.host.as_str(), server.port), ("10.0.0.5", 10009));
        assert_eq!(server_data("/ns", "lock-0001", "x"), None);
        assert!(
            sequence("serverUri=a:1;version=1;sequence=0000000002")
                > sequence("serverUri=b:1;version=1;sequence=0000000001")
        );
    }
}
