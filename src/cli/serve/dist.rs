//! The built page that `sightline serve` serves: where it is found, its content types, and the
//! Content-Security-Policy it is served with.

use std::path::{Path, PathBuf};

/// The page's own policy, as `www/index.html` states it in its `<meta>` (`tests/serve.rs` checks
/// they are equal). The server sends the policy of the `index.html` it serves; this is the
/// fallback for one without a `<meta>` policy.
pub const CSP: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'none'";

/// What to run when no built page is found.
pub const BUILD_HINT: &str =
    "run `trunk build --release` in the checkout (scripts/setup installs Trunk), or point \
SIGHTLINE_DIST at a built dist/ folder";

/// The candidates, in order: `$SIGHTLINE_DIST`, `dist/` beside the executable, the checkout's
/// `dist/` (known when this binary was compiled).
pub fn candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(d) = std::env::var_os("SIGHTLINE_DIST").filter(|d| !d.is_empty()) {
        out.push(PathBuf::from(d));
    }
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        out.push(dir.join("dist"));
    }
    out.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("dist"));
    out
}

/// The first candidate that holds an `index.html`. When `SIGHTLINE_DIST` is set it is the only
/// candidate looked at, so a wrong setting is not hidden by another build.
pub fn find() -> Result<PathBuf, String> {
    let all = candidates();
    let looked = if std::env::var_os("SIGHTLINE_DIST").is_some_and(|d| !d.is_empty()) {
        &all[..1]
    } else {
        &all[..]
    };
    for c in looked {
        if c.join("index.html").is_file() {
            return Ok(c.clone());
        }
    }
    let list: Vec<String> = looked.iter().map(|c| c.display().to_string()).collect();
    Err(format!(
        "no built page (index.html) in {}: {BUILD_HINT}",
        list.join(", ")
    ))
}

/// The policy in the `<meta http-equiv="Content-Security-Policy">` of `html`, if any.
pub fn meta_csp(html: &str) -> Option<String> {
    let at = html.find("http-equiv=\"Content-Security-Policy\"")?;
    let tag_start = html[..at].rfind('<')?;
    let tag_end = at + html[at..].find('>')?;
    let tag = &html[tag_start..tag_end];
    let c = tag.find("content=\"")? + "content=\"".len();
    let len = tag[c..].find('"')?;
    Some(tag[c..c + len].to_string())
}

/// `index.html` with `<meta name="sightline-serve" content="logdir">` (`"page"` without LOGDIR)
/// before `</head>`: how the page knows a server beside it lists runs (`www/js/logdir.js`), without
/// asking a static host for an API it does not have.
pub fn mark_served(html: &str, logdir: bool) -> String {
    let meta = format!(
        "<meta name=\"sightline-serve\" content=\"{}\">\n",
        if logdir { "logdir" } else { "page" }
    );
    match html.find("</head>") {
        Some(at) => format!("{}{meta}{}", &html[..at], &html[at..]),
        None => html.to_string(),
    }
}

/// The Content-Type for a file name.
pub fn content_type(name: &str) -> &'static str {
    let ext = name
        .rsplit_once('.')
        .map_or("", |(_, e)| e)
        .to_ascii_lowercase();
    match ext.as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "wasm" => "application/wasm",
        "json" | "map" => "application/json",
        "gz" => "application/gzip",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "txt" | "md" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_meta_policy_is_read() {
        let html = r#"<head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'self'"></head>"#;
        assert_eq!(meta_csp(html).as_deref(), Some("default-src 'self'"));
        assert_eq!(meta_csp("<html></html>"), None);
        let marked = mark_served(html, true);
        assert!(marked.ends_with("<meta name=\"sightline-serve\" content=\"logdir\">\n</head>"));
        assert_eq!(meta_csp(&marked).as_deref(), Some("default-src 'self'"));
    }

    #[test]
    fn content_types() {
        assert_eq!(content_type("sightline_bg.wasm"), "application/wasm");
        assert_eq!(content_type("js/app.js"), "text/javascript; charset=utf-8");
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(content_type("x.pt.trace.json.gz"), "application/gzip");
    }
}
