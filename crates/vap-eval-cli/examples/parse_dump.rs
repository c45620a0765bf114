//! The audit benchmark's baseline (bench/audit.sh): serde_json merely parsing every object of
//! a JSON-lines dump, one line at a time, on one thread. Prints the objects parsed.

use std::io::BufRead;

fn main() {
    let path = std::env::args().nth(1).unwrap_or_else(|| "-".into());
    let input: Box<dyn BufRead> = if path == "-" {
        Box::new(std::io::BufReader::new(std::io::stdin()))
    } else {
        match std::fs::File::open(&path) {
            Ok(f) => Box::new(std::io::BufReader::with_capacity(1 << 16, f)),
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(2);
            }
        }
    };
    let mut objects = 0u64;
    for line in input.lines().map_while(Result::ok) {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<serde_json::Value>(&line) {
            Ok(v) if v.is_object() => objects += 1,
            _ => {}
        }
    }
    println!("{objects}");
}
