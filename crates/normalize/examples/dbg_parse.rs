//! Debug: parse argv[1] and print the result.
fn main() {
    let s = std::env::args().nth(1).unwrap();
    match shellgate_normalize::parse(&s) {
        Ok(t) => println!("{t:#?}\n{}", shellgate_normalize::print(&t, &s)),
        Err(e) => println!("{e} near {:?}", &s[e.offset.min(s.len())..]),
    }
}
