//! Property: a command joining an allowed command and a command no rule allows with an unquoted
//! `;`, `&&`, `||`, `|`, `&` or newline is never allowed, in either order.

mod common;

use proptest::prelude::*;
use shellgate_intercept::Decision;

const ALLOWED: &[&str] = &[
    "ls -la",
    "git status",
    "grep -rn 'a|b' src",
    "cat README.md",
    "echo \"a && b\"",
    "awk 'NR>1' f",
    "wc -l f",
    "git log --oneline -5",
    "cargo test",
];

const SEPARATORS: &[&str] = &[";", "&&", "||", "|", "&", "\n", " ; ", " && ", " | "];

fn not_allowed() -> impl Strategy<Value = String> {
    let name = prop::sample::select(vec![
        "rm", "curl", "touch", "mv", "cp", "chmod", "python3", "npm", "make", "dd", "evil",
    ]);
    let arg = "[a-z./-]{1,8}";
    (name, prop::collection::vec(arg, 0..3)).prop_map(|(n, args)| {
        let mut s = n.to_owned();
        for a in args {
            s.push(' ');
            s.push_str(&a);
        }
        s
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn a_non_allowed_segment_is_never_allowed(
        allowed in prop::sample::select(ALLOWED.to_vec()),
        sep in prop::sample::select(SEPARATORS.to_vec()),
        other in not_allowed(),
        other_first in any::<bool>(),
    ) {
        let policy = common::safe_policy(&["cargo test"]);
        prop_assert_eq!(common::decide(&policy, allowed), Decision::Allow, "{:?} must be allowed alone", allowed);
        let command = if other_first { format!("{other}{sep}{allowed}") } else { format!("{allowed}{sep}{other}") };
        prop_assert_ne!(common::decide(&policy, &command), Decision::Allow, "{:?}", command);
    }
}
