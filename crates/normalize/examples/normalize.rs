//! Normalize each argument (or a few built-in samples) and print what the normalizer made of it.
//!
//! `cargo run -p shellgate-normalize --example normalize -- 'cd /tmp && ls | head -n 3'`

use shellgate_normalize::{Normalizer, StandardNormalizer, print};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let samples = if args.is_empty() {
        vec![
            "seq 1 100 | head -n 5".to_owned(),
            "cd /tmp && make 2>&1 | tail -20".to_owned(),
            r#"echo "a | head -n 1""#.to_owned(),
            "cat <<EOF | head -n 3\nbody | head -n 3\nEOF".to_owned(),
            "echo 'unterminated".to_owned(),
        ]
    } else {
        args
    };
    let normalizer = StandardNormalizer::default();
    for command in samples {
        let n = normalizer.normalize(&command);
        println!("command : {command:?}");
        println!("script  : {:?}", n.script);
        println!("limits  : head={:?} tail={:?}", n.limits.head, n.limits.tail);
        if let Some(cwd) = &n.cwd {
            println!("cwd     : {cwd}");
        }
        for r in &n.rewrites {
            println!("notice  : [{}] {}", r.rule, r.message);
        }
        match &n.tree {
            Ok(tree) => println!("tree    : {:?}", print(tree, &n.script)),
            Err(e) => println!("error   : {e}"),
        }
        println!();
    }
}
