//! The text layout the table commands share, PyTorch's: right-aligned columns two spaces apart,
//! dashed rules, times in us/ms/s with three decimals, memory in B/KB/MB/GB (powers of 1024).

/// A column of a text table.
pub(super) struct Column {
    title: String,
    /// Characters; a cell longer than this is cut by whoever fills it.
    pub(super) width: usize,
    left: bool,
}

impl Column {
    pub(super) fn right(title: impl Into<String>, width: usize) -> Column {
        Column {
            title: title.into(),
            width,
            left: false,
        }
    }

    pub(super) fn left(title: impl Into<String>, width: usize) -> Column {
        Column {
            title: title.into(),
            width,
            left: true,
        }
    }
}

/// Rule, header, rule, rows, rule; every cell followed by two spaces, as PyTorch prints.
pub(super) fn layout(cols: &[Column], rows: impl Iterator<Item = Vec<String>>) -> String {
    let line = |cells: &[&str]| -> String {
        let mut s = String::new();
        for (c, text) in cols.iter().zip(cells) {
            if c.left {
                s.push_str(&format!("{text:<w$}  ", w = c.width));
            } else {
                s.push_str(&format!("{text:>w$}  ", w = c.width));
            }
        }
        s.push('\n');
        s
    };
    let rule: String = cols
        .iter()
        .map(|c| format!("{}  ", "-".repeat(c.width)))
        .collect::<String>()
        + "\n";
    let titles: Vec<&str> = cols.iter().map(|c| c.title.as_str()).collect();
    let mut out = rule.clone();
    out.push_str(&line(&titles));
    out.push_str(&rule);
    for r in rows {
        let cells: Vec<&str> = r.iter().map(String::as_str).collect();
        out.push_str(&line(&cells));
    }
    out.push_str(&rule);
    out
}

/// PyTorch's name column: as wide as the longest name plus 4, at most 55.
pub(super) fn name_width<'a>(names: impl Iterator<Item = &'a str>) -> usize {
    (names.map(|n| n.chars().count()).max().unwrap_or(0) + 4).min(55)
}

/// PyTorch's name cell: a name of `max - 3` characters or more is cut there and gets `...`.
pub(super) fn truncate_name(name: &str, max: usize) -> String {
    if name.chars().count() >= max - 3 {
        name.chars().take(max - 3).chain("...".chars()).collect()
    } else {
        name.to_string()
    }
}

/// PyTorch's `_format_time`: microseconds as us, ms or s with three decimals.
pub(super) fn fmt_time(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.3}s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.3}ms", us / 1e3)
    } else {
        format!("{us:.3}us")
    }
}

/// PyTorch's `_format_time_share`: a percentage with two decimals, `NaN` when the whole it is a
/// share of is zero.
pub(super) fn share(pct: f64, whole: f64) -> String {
    if whole == 0.0 {
        "NaN".to_string()
    } else {
        format!("{pct:.2}%")
    }
}

/// PyTorch's `_format_memory`: bytes in B, KB, MB or GB (powers of 1024).
pub(super) fn fmt_memory(bytes: i64) -> String {
    const KB: f64 = 1024.0;
    let b = bytes as f64;
    if b.abs() >= KB * KB * KB {
        format!("{:.2} GB", b / (KB * KB * KB))
    } else if b.abs() >= KB * KB {
        format!("{:.2} MB", b / (KB * KB))
    } else if b.abs() >= KB {
        format!("{:.2} KB", b / KB)
    } else {
        format!("{bytes} B")
    }
}
