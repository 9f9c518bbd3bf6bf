//! Fuzz the parser: never panic; a parsed tree has valid spans and re-prints stably.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shellgate_normalize::{parse, print};

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else { return };
    match parse(src) {
        Ok(tree) => {
            assert!(tree.span.end <= src.len());
            for c in tree.simple_commands() {
                assert!(src.get(c.span.start..c.span.end).is_some(), "span off a char boundary");
            }
            let printed = print(&tree, src);
            let again = parse(&printed).expect("a printed tree parses");
            assert_eq!(print(&again, &printed), printed, "printing is stable");
        }
        Err(e) => assert!(e.offset <= src.len()),
    }
});
