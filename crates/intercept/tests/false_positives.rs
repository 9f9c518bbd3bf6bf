//! Harmless commands that quote-blind matchers refuse must be allowed.

mod common;

use common::{decide, judge, safe_policy};
use shellgate_intercept::{Basis, Decision};

#[test]
fn awk_comparisons_are_not_redirections() {
    assert_eq!(
        decide(&safe_policy(&[]), "awk 'NR>1 && NR<5' file.txt"),
        Decision::Allow
    );
    assert_eq!(
        decide(
            &safe_policy(&[]),
            "awk -F: '{ if ($3 > 1000) print $1 }' /etc/passwd"
        ),
        Decision::Allow
    );
}

#[test]
fn quoted_pipes_are_not_pipelines() {
    assert_eq!(decide(&safe_policy(&[]), "grep 'a|b' file"), Decision::Allow);
    assert_eq!(
        decide(&safe_policy(&[]), "grep -E \"foo|bar\" -r src"),
        Decision::Allow
    );
}

#[test]
fn quoted_operators_in_a_commit_message() {
    let p = safe_policy(&["git commit *"]);
    assert_eq!(decide(&p, "git commit -m \"a && b\""), Decision::Allow);
    assert_eq!(
        decide(&p, "git commit -m 'fix; update | docs > notes'"),
        Decision::Allow
    );
}

#[test]
fn harmless_redirects_and_pipelines() {
    let p = safe_policy(&["cargo test *"]);
    for c in [
        "ls 2>/dev/null",
        "cargo test 2>&1 | tail -n 20",
        "grep x f >&2",
        "find . -name '*.rs' | xargs grep -l TODO",
        "cat <<'EOF'\n$(not run)\nEOF",
        "git log --oneline | head -5",
        "cd src && ls",
        "set -euo pipefail; ls",
        "for f in *.rs; do wc -l \"$f\"; done",
        "if [ -f Cargo.toml ]; then cat Cargo.toml; fi",
        "[[ -d src ]] && ls src",
        "sed -n '1,20p' src/lib.rs",
        "wc -l $(find . -name '*.rs')",
    ] {
        let j = judge(&p, c);
        assert_eq!(j.decision(), Decision::Allow, "{c:?}: {:?}", j.segments);
    }
}

#[test]
fn every_segment_names_what_allowed_it() {
    let j = judge(
        &safe_policy(&["cargo test *"]),
        "ls && true && cargo test | grep ok",
    );
    let bases: Vec<Basis> = j.segments.iter().map(|s| s.basis).collect();
    assert_eq!(
        bases,
        [
            Basis::SafeProfile,
            Basis::Inert,
            Basis::AllowRule,
            Basis::SafeProfile
        ]
    );
    assert_eq!(j.segments[2].rule.as_deref(), Some("cargo test *"));
}
