//! The rewrite rules of [`crate::StandardNormalizer`] (SPEC N-2, N-3, N-4).
//!
//! Each rule looks at the tree and proposes byte ranges to delete from the script plus what it
//! lifted out; the normalizer applies the deletions once and re-parses the result.

pub(crate) mod cd;
pub(crate) mod limiter;
pub(crate) mod redirect;

use crate::ast::{Pipeline, Script, Terminator};

/// The pipeline that produces all of the script's output, when there is exactly one.
///
/// A limiter can only be lifted out of that pipeline: applying `head -n 5` to the output of
/// `echo start; ls | head -n 5` would cut differently than the command itself does (SPEC N-8).
/// With `cd_lifted`, the leading `cd DIR &&` is already gone, so the pipeline after it counts.
pub(crate) fn sole_pipeline(script: &Script, cd_lifted: bool) -> Option<&Pipeline> {
    let [item] = script.list.items.as_slice() else {
        return None;
    };
    if item.terminator == Some(Terminator::Background) {
        return None;
    }
    let and_or = &item.and_or;
    match (cd_lifted, and_or.rest.as_slice()) {
        (false, []) => Some(&and_or.first),
        (true, [(_, p)]) => Some(p),
        _ => None,
    }
}
