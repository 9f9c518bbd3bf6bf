//! Parse one command and print its syntax tree and canonical form (or the syntax error).
//!
//! `cargo run -p shellgate-normalize --example parse_tree -- 'cat <<EOF | wc -l'`

fn main() {
    let Some(source) = std::env::args().nth(1) else {
        eprintln!("usage: parse_tree '<command>'");
        std::process::exit(2);
    };
    match shellgate_normalize::parse(&source) {
        Ok(tree) => println!("{tree:#?}\n{}", shellgate_normalize::print(&tree, &source)),
        Err(e) => {
            let rest = source.get(e.offset..).unwrap_or("");
            println!("{e} (at {rest:?})");
        }
    }
}
