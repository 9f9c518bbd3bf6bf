//! What one stage of a pipeline tells about the next: a download piped into an interpreter runs
//! it; process ids looked up for the engine and piped into `xargs kill` stop it; the paths `find`
//! prints and `xargs` appends are never options.

use crate::argv::{Arg, basename};
use crate::segment::{Segment, SegmentKind};

/// Check a pipeline whose stage `k` produced the segments from `stage_starts[k]` on.
pub(crate) fn check(out: &mut [Segment], stage_starts: &[usize]) {
    crate::danger::pipe_to_interpreter(out, stage_starts);
    for (k, pair) in stage_starts.windows(2).enumerate() {
        let (producer, consumer) = (
            pair[0]..pair[1],
            pair[1]..stage_starts.get(k + 2).copied().unwrap_or(out.len()),
        );
        let Some(from) = single_run(&out[producer.clone()]) else {
            continue;
        };
        let from = from.to_vec();
        // `pgrep -f 'gate rpc' | while read p; do kill "$p"; done`, `| xargs -I{} kill {}`:
        // a `kill` fed what the lookup prints.
        if finds_engine(&from) {
            for seg in &mut out[consumer.clone()] {
                if let SegmentKind::Run(inv) = &seg.kind
                    && inv.argv.first().and_then(Arg::get).map(basename) == Some("kill")
                    && (inv.open_ended || inv.argv[1..].iter().any(Arg::is_dynamic))
                {
                    seg.danger.get_or_insert_with(|| {
                        "`kill` would stop the engine itself, found by its command line".into()
                    });
                }
            }
        }
        let Some(to) = consumer_of_appended(&mut out[consumer.clone()]) else {
            continue;
        };
        if prints_paths_only(&from) {
            // `find . | xargs rm`: each appended word starts with a starting point.
            to.open_ended = false;
            to.argv.push(Arg::dynamic("(paths found by find)", false));
        }
        if to.argv.first().and_then(Arg::get).map(basename) == Some("kill")
            && finds_engine(&from)
            && let Some(seg) = out.get_mut(consumer.start)
        {
            seg.danger.get_or_insert_with(|| {
                "`kill` would stop the engine itself, found by its command line".into()
            });
        }
    }
}

/// The argv of the only command a stage runs.
fn single_run(segments: &[Segment]) -> Option<&[Arg]> {
    match segments {
        [
            Segment {
                kind: SegmentKind::Run(inv),
                ..
            },
        ] if !inv.open_ended => Some(&inv.argv),
        _ => None,
    }
}

/// The command of a stage that `xargs` gives its input to as appended words.
fn consumer_of_appended(segments: &mut [Segment]) -> Option<&mut crate::segment::Invocation> {
    match segments {
        [
            Segment {
                kind: SegmentKind::Run(inv),
                ..
            },
            ..,
        ] if inv.open_ended && inv.written.first().and_then(Arg::get).map(basename) == Some("xargs") => {
            Some(inv)
        }
        _ => None,
    }
}

/// `find` with fixed starting points that prints nothing but the paths it finds.
fn prints_paths_only(argv: &[Arg]) -> bool {
    let Some((name, args)) = argv.split_first() else {
        return false;
    };
    if name.get().map(basename) != Some("find") {
        return false;
    }
    // A starting point cannot start with `-` (find reads that as its expression), and every
    // path printed starts with a starting point.
    args.iter().all(|a| {
        a.get().is_some_and(|v| {
            !matches!(
                v,
                "-printf"
                    | "-fprintf"
                    | "-ls"
                    | "-fls"
                    | "-exec"
                    | "-execdir"
                    | "-ok"
                    | "-okdir"
                    | "-fprint"
                    | "-fprint0"
            )
        })
    })
}

/// `pgrep`/`pidof` whose pattern matches the engine's command line.
fn finds_engine(argv: &[Arg]) -> bool {
    let Some((name, args)) = argv.split_first() else {
        return false;
    };
    match name.get().map(basename) {
        Some("pgrep") => crate::engine_signal::pattern_matches_engine("pkill", args),
        Some("pidof") => args.iter().any(|a| a.is("shellgate")),
        _ => false,
    }
}
