//! The host contract against real Docker and Podman containers (`.ci/hosts.sh up`; a skip is a
//! failure under `SHELLGATE_REQUIRE_ALL=1`).

mod support;

use shellgate_hosts::{HostTarget, RemoteHost};
use support::contract;

fn host(engine: &str) -> Option<(tempfile::TempDir, RemoteHost)> {
    let dir = tempfile::tempdir().unwrap();
    let host = support::container_host(engine, dir.path())?;
    Some((dir, host))
}

macro_rules! contract_for {
    ($engine:ident) => {
        mod $engine {
            use super::*;

            #[tokio::test]
            async fn one_shot_basics() {
                let Some((_dir, host)) = host(stringify!($engine)) else {
                    return;
                };
                contract::one_shot_basics(&host).await;
            }

            #[tokio::test]
            async fn a_timeout_leaves_nothing_in_the_container() {
                let Some((_dir, host)) = host(stringify!($engine)) else {
                    return;
                };
                contract::one_shot_timeout_leaves_nothing(&host).await;
            }

            #[tokio::test]
            async fn a_terminal_timeout_leaves_nothing_in_the_container() {
                let Some((_dir, host)) = host(stringify!($engine)) else {
                    return;
                };
                contract::terminal_timeout_leaves_nothing(&host).await;
            }

            #[tokio::test]
            async fn a_session_keeps_state() {
                let Some((_dir, host)) = host(stringify!($engine)) else {
                    return;
                };
                contract::session_keeps_state(&host).await;
            }

            #[tokio::test]
            async fn a_missing_container_fails_to_start() {
                let Some((dir, host)) = host(stringify!($engine)) else {
                    return;
                };
                let target = HostTarget::parse(concat!(stringify!($engine), ":no-such-container")).unwrap();
                contract::unreachable(&RemoteHost::new(target, host.clients().clone(), dir.path())).await;
            }
        }
    };
}

contract_for!(docker);
contract_for!(podman);
