//! One duration rule for the Rust text and the page: `sightline::units::duration` and
//! `www/js/format.js`'s `duration` give the same text on a range of values, run side by side
//! (the page's module in Node).
#![cfg(not(target_arch = "wasm32"))]

use sightline::units::{duration, signed_duration};
use std::path::Path;

/// Values around every unit's edge and rounding step, ties included (1.125 µs, 0.5 ns), and a
/// spread over twelve decades, both signs.
fn values() -> Vec<f64> {
    let mut v = vec![
        0.0,
        0.4,
        0.5,
        1.0,
        9.5,
        99.5,
        999.0,
        999.4,
        999.5,
        1000.0,
        1125.0,
        1234.5,
        9_994.9,
        9_995.0,
        9_999.0,
        10_000.0,
        99_949.0,
        99_950.0,
        99_999.0,
        100_000.0,
        999_499.0,
        999_500.0,
        999_999.0,
        1e6,
        1_005_000.0,
        1.5e6,
        12_345_678.0,
        99_950_000.0,
        999_999_999.0,
        1e9,
        2.04e9,
        123_456_789_012.0,
    ];
    let mut x = 0.37;
    while x < 1e12 {
        v.push(x);
        x *= 1.37;
    }
    let negative: Vec<f64> = v.iter().map(|x| -x).collect();
    v.extend(negative);
    v
}

#[test]
fn the_page_writes_durations_as_the_rust_text_does() {
    let values = values();
    let module = Path::new(env!("CARGO_MANIFEST_DIR")).join("www/js/format.js");
    let script = format!(
        "import {{ duration }} from {url}; \
         const values = JSON.parse(process.argv[1]); \
         process.stdout.write(JSON.stringify(values.map(duration)));",
        url = serde_json::to_string(&format!("file://{}", module.display())).unwrap()
    );
    let out = std::process::Command::new("node")
        .args(["--input-type=module", "-e", &script])
        .arg(serde_json::to_string(&values).unwrap())
        .output()
        .expect("node runs the page's format.js (scripts/test installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page: Vec<String> = serde_json::from_slice(&out.stdout).unwrap();
    let differ: Vec<String> = values
        .iter()
        .zip(&page)
        .filter(|(&ns, js)| duration(ns) != **js)
        .map(|(&ns, js)| format!("{ns}: Rust {:?}, page {js:?}", duration(ns)))
        .collect();
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

#[test]
fn a_signed_duration_is_the_duration_with_its_sign() {
    assert_eq!(signed_duration(1_500_000.0), "+1.50 ms");
    assert_eq!(signed_duration(-850.0), "-850 ns");
    assert_eq!(signed_duration(0.0), "+0 ns");
    assert_eq!(duration(12_300.0), "12.3 µs");
    assert_eq!(duration(2_040_000_000.0), "2.04 s");
}
