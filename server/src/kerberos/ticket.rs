//! The gateway's own Kerberos ticket, for the engines and batches it launches: `kinit` from its keytab into a cache of its own, renewed on a schedule.
//!
//! On a Kerberos-secured Hadoop cluster `spark-submit --proxy-user` needs a ticket of the
//! user who impersonates (the gateway's principal), as Kyuubi's `KinitAuxiliaryService`
//! keeps one with `kyuubi.kinit.principal`, `.keytab` and `.interval`. The keytab stays
//! with the gateway: engines get only `KRB5CCNAME`, the cache's path. The cache lives in
//! the work directory (mode 0600, like every MIT cache), written by MIT's `kinit` (Debian's
//! `krb5-user`): a ticket is a client's business, which the acceptor library (GSS-API) does
//! not do for us, and `kinit` is what an operator would run by hand.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// The variable MIT krb5 and Hadoop's Java clients read the ticket cache's name from.
pub const CACHE_VARIABLE: &str = "KRB5CCNAME";

/// The gateway's ticket cache, kept fresh by [`TicketCache::keep_fresh`].
#[derive(Clone, Debug)]
pub struct TicketCache {
    principal: String,
    keytab: PathBuf,
    path: PathBuf,
}

impl TicketCache {
    /// The cache of `principal`'s tickets in `work_dir/kerberos/`, from `keytab`.
    pub fn new(principal: &str, keytab: &Path, work_dir: &Path) -> Result<TicketCache, String> {
        let dir = work_dir.join("kerberos");
        std::fs::create_dir_all(&dir).map_err(|e| {
            format!(
                "cannot create {} for the gateway's ticket cache: {e}",
                dir.display()
            )
        })?;
        Ok(TicketCache {
            principal: principal.to_owned(),
            keytab: keytab.to_owned(),
            path: dir.join("krb5cc_gateway"),
        })
    }

    /// `KRB5CCNAME`'s value for the engines: `FILE:` and the cache's path.
    pub fn variable_value(&self) -> String {
        format!("FILE:{}", self.path.display())
    }

    /// `kinit -k -t KEYTAB -c FILE:PATH PRINCIPAL`, program first.
    fn kinit_command(&self) -> Vec<String> {
        vec![
            "kinit".to_owned(),
            "-k".to_owned(),
            "-t".to_owned(),
            self.keytab.display().to_string(),
            "-c".to_owned(),
            self.variable_value(),
            self.principal.clone(),
        ]
    }

    /// Gets a fresh ticket into the cache; `Err` says why not (no `kinit`, its own error).
    pub async fn renew(&self) -> Result<(), String> {
        let command = self.kinit_command();
        let output = tokio::process::Command::new(&command[0])
            .args(&command[1..])
            .stdin(std::process::Stdio::null())
            .output()
            .await
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => {
                    "`kinit` is not installed (Debian's krb5-user): engines get no ticket of the gateway's"
                        .to_owned()
                }
                _ => format!("cannot run kinit: {e}"),
            })?;
        if output.status.success() {
            return Ok(());
        }
        let said = String::from_utf8_lossy(&output.stderr);
        Err(format!(
            "`{}` failed ({}): {}",
            command.join(" "),
            output.status,
            said.trim()
        ))
    }

    /// Renews now, logging how it went: at start, so that the first engines find a ticket.
    pub async fn renew_logged(&self) {
        match self.renew().await {
            Ok(()) => {
                tracing::info!(principal = %self.principal, cache = %self.variable_value(), "gateway ticket for the engines renewed (kinit)")
            }
            Err(reason) => {
                tracing::warn!(principal = %self.principal, %reason, "the gateway's ticket for the engines was not renewed")
            }
        }
    }

    /// Renews every `interval` until `shutdown`; a failure is logged and the next round tries
    /// again (a KDC down now may answer in an hour).
    pub async fn keep_fresh(self, interval: Duration, shutdown: CancellationToken) {
        loop {
            tokio::select! {
                _ = tokio::time::sleep(interval) => self.renew_logged().await,
                _ = shutdown.cancelled() => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinit_reads_the_keytab_into_the_gateways_own_cache() {
        let work = tempfile::tempdir().unwrap();
        let cache = TicketCache::new(
            "kumiho/gw.example.com@EXAMPLE.COM",
            Path::new("/etc/kumiho/kumiho.keytab"),
            work.path(),
        )
        .unwrap();
        let path = work.path().join("kerberos/krb5cc_gateway");
        assert_eq!(cache.variable_value(), format!("FILE:{}", path.display()));
        assert_eq!(
            cache.kinit_command().join(" "),
            format!(
                "kinit -k -t /etc/kumiho/kumiho.keytab -c FILE:{} kumiho/gw.example.com@EXAMPLE.COM",
                path.display()
            )
        );
    }
}
