fn main() {
    println!("sightline {}", env!("CARGO_PKG_VERSION"));
}
