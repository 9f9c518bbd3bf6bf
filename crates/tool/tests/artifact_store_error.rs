//! A store that cannot be opened is reported on truncated results instead of being dropped silently.
//! (Its own test binary: it changes the process environment before anything else runs.)

use shellgate::{BashParams, BashTool, CancellationToken, ToolConfig};

#[tokio::test]
async fn a_truncated_result_says_why_its_full_output_was_not_saved() {
    // SAFETY: the only test of this binary sets the variable before it starts any thread of its own.
    unsafe { std::env::set_var("SHELLGATE_ARTIFACT_DIR", "/proc/1/nope-739") };
    let config = ToolConfig {
        default_session: shellgate::NO_SESSION.into(),
        ..ToolConfig::default()
    };
    assert!(config.artifacts.is_none());
    let error = config.artifacts_error.clone().expect("the error is kept");
    assert!(error.contains("/proc/1/nope-739"), "{error}");

    let bash = BashTool::new(config);
    let r = bash
        .call(BashParams::new("seq 1 200000"), CancellationToken::new())
        .await;
    assert!(r.truncation.is_some(), "{r:?}");
    assert!(r.artifact.is_none(), "{r:?}");
    let wanted = format!("Full output could not be saved: {error}");
    assert!(r.notices.contains(&wanted), "{:?}", r.notices);

    // An output that fits has nothing to save and no such notice.
    let r = bash
        .call(BashParams::new("echo short"), CancellationToken::new())
        .await;
    assert!(r.truncation.is_none(), "{r:?}");
    assert!(
        r.notices.iter().all(|n| !n.starts_with("Full output")),
        "{:?}",
        r.notices
    );
}
