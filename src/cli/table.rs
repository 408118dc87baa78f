//! The text layout the table commands share, PyTorch's: right-aligned columns two spaces apart,
//! dashed rules, times in us/ms/s with three decimals, memory in B/KB/MB/GB (powers of 1024).
//!
//! A table whose rows declare their columns ([`Row`]) is laid out from the declarations
//! ([`declared`]): a command says which columns it shows, in which order and how wide ([`Shown`]);
//! the header is the column's label and each cell is formatted by the column's unit
//! ([`Style::cell`]), unless the command formats a cell of its own (a name cut to its width, a
//! share that PyTorch prints as `NaN`). The sections of `sightline report` that hold a table
//! (steps, idle) set it out in a [`Style`] of their own ([`declared_in`]): indented, without
//! rules, times in milliseconds; `sightline diff`'s tables too, with times in words and each
//! change signed ([`Style::comparison`], [`Shown::signed`]). Tables without declarations list
//! [`Column`]s by hand.

use serde_json::Value;
use sightline::analysis::columns::{Column as Declared, Row, Unit};
use sightline::units::{duration, signed_duration};

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

/// How a text table writes times.
#[derive(Clone, Copy)]
enum Times {
    /// PyTorch's us, ms or s, whichever reads best in each cell.
    PyTorch,
    /// Milliseconds with the style's decimals, followed by this suffix, one unit down each column.
    Ms(&'static str),
    /// In words with three significant figures (`45.5 ms`, `934 µs`), as the headline writes them.
    Words,
}

/// How a text table is set out.
pub(super) struct Style {
    /// Before each line.
    indent: &'static str,
    /// Between two cells.
    gap: &'static str,
    /// PyTorch's: dashed rules above and below the header and below the rows, and every cell
    /// followed by the gap.
    rules: bool,
    times: Times,
    /// The decimals of a time in milliseconds.
    decimals: usize,
}

/// PyTorch's table, which the table commands print.
pub(super) const PYTORCH: Style = Style {
    indent: "",
    gap: "  ",
    rules: true,
    times: Times::PyTorch,
    decimals: 3,
};

impl Style {
    /// A table inside a section of `sightline report` (steps, idle): indented two spaces, cells
    /// `gap` apart, no rules, times in milliseconds followed by `suffix`.
    pub(super) const fn section(gap: &'static str, suffix: &'static str) -> Style {
        Style {
            indent: "  ",
            gap,
            rules: false,
            times: Times::Ms(suffix),
            decimals: 3,
        }
    }

    /// A table of `sightline diff`'s: indented two spaces, cells two spaces apart, no rules, times
    /// in words, as its headline and steps write them.
    pub(super) const fn comparison() -> Style {
        Style {
            indent: "  ",
            gap: "  ",
            rules: false,
            times: Times::Words,
            decimals: 3,
        }
    }

    /// The same style, times in milliseconds with `decimals` decimals (`sightline ranks`' two).
    pub(super) const fn decimals(self, decimals: usize) -> Style {
        Style { decimals, ..self }
    }

    /// A value as its unit is written in the text tables: times as PyTorch's `_format_time` (or
    /// in this style's milliseconds), memory as its `_format_memory`, percentages and figures
    /// with the column's decimals, `-` for none.
    pub(super) fn cell(&self, unit: Unit, digits: u8, v: &Value) -> String {
        let d = usize::from(digits);
        let ms = self.decimals;
        let f = || v.as_f64().unwrap_or(0.0);
        match (unit, v, self.times) {
            (Unit::Ratio, Value::Null, _) => "new".to_string(),
            (_, Value::Null, _) => "-".to_string(),
            (Unit::Us, _, Times::Ms(suffix)) => format!("{:.ms$}{suffix}", f() / 1e3),
            (Unit::Ns, _, Times::Ms(suffix)) => format!("{:.ms$}{suffix}", f() / 1e6),
            (Unit::Us, _, Times::PyTorch) => fmt_time(f()),
            (Unit::Ns, _, Times::PyTorch) => fmt_time(f() / 1000.0),
            (Unit::Us, _, Times::Words) => duration(f() * 1e3),
            (Unit::Ns, _, Times::Words) => duration(f()),
            (Unit::Bytes, _, _) => match v.as_i64() {
                Some(b) => fmt_memory(b),
                None => fmt_memory(f() as i64),
            },
            (Unit::Pct, _, _) => format!("{:.d$}%", f()),
            (Unit::Fraction, _, _) => format!("{:.d$}%", 100.0 * f()),
            (Unit::Ratio, _, _) => format!("{:+.d$}%", 100.0 * (f() - 1.0)),
            (Unit::Number, _, _) => format!("{:.d$}", f()),
            (Unit::Flag, Value::Bool(b), _) => if *b { "yes" } else { "no" }.to_string(),
            (_, Value::String(s), _) => s.clone(),
            (_, other, _) => other.to_string(),
        }
    }

    /// A change as [`Style::cell`] writes its value, with its sign: `+` before none or a gain.
    fn signed_cell(&self, unit: Unit, digits: u8, v: &Value) -> String {
        match (unit, self.times, v.as_f64()) {
            (Unit::Us, Times::Words, Some(us)) => signed_duration(us * 1e3),
            (Unit::Ns, Times::Words, Some(ns)) => signed_duration(ns),
            (_, _, Some(x)) if x >= 0.0 => format!("+{}", self.cell(unit, digits, v)),
            _ => self.cell(unit, digits, v),
        }
    }

    /// The header and the rows, each cell aligned in its column's width.
    fn set_out(&self, cols: &[Column], rows: impl Iterator<Item = Vec<String>>) -> String {
        let end = if self.rules { self.gap } else { "" };
        let line = |cells: &[&str]| -> String {
            let cells: Vec<String> = cols
                .iter()
                .zip(cells)
                .map(|(c, text)| {
                    if c.left {
                        format!("{text:<w$}", w = c.width)
                    } else {
                        format!("{text:>w$}", w = c.width)
                    }
                })
                .collect();
            format!("{}{}{end}\n", self.indent, cells.join(self.gap))
        };
        let dashes: Vec<String> = cols.iter().map(|c| "-".repeat(c.width)).collect();
        let dashes: Vec<&str> = dashes.iter().map(String::as_str).collect();
        let rule = if self.rules {
            line(&dashes)
        } else {
            String::new()
        };
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
}

/// Rule, header, rule, rows, rule; every cell followed by two spaces, as PyTorch prints.
pub(super) fn layout(cols: &[Column], rows: impl Iterator<Item = Vec<String>>) -> String {
    PYTORCH.set_out(cols, rows)
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

/// A declared column as a text table shows it: its key, the member of an object column it shows
/// (a spread's `min`, a step's kernel time), its width, and whether it is left-aligned or widened
/// to its header.
pub(super) struct Shown {
    pub(super) key: &'static str,
    part: Option<(&'static str, Unit)>,
    /// A member the column declares ([`sightline::analysis::columns::Column::parts`]).
    member: Option<&'static str>,
    /// The member is headed by the column's label and its own (`Base Self CPU`).
    side: bool,
    /// A change: written with its sign.
    signed: bool,
    pub(super) width: usize,
    left: bool,
    fit: bool,
    title: Option<String>,
    /// Not a column the row declares: a figure from elsewhere in the answer, headed `title`,
    /// every cell the command's own.
    undeclared: bool,
}

impl Shown {
    /// Right-aligned, `width` characters (a longer header overflows, as PyTorch's does).
    pub(super) fn right(key: &'static str, width: usize) -> Shown {
        Shown {
            key,
            part: None,
            member: None,
            side: false,
            signed: false,
            width,
            left: false,
            fit: false,
            title: None,
            undeclared: false,
        }
    }

    /// A column the row does not declare, headed `title` (a figure the answer holds beside the
    /// rows, such as `sightline ranks`' overlap): every cell comes from the command's `own`.
    pub(super) fn undeclared(key: &'static str, title: &str, width: usize) -> Shown {
        Shown {
            undeclared: true,
            title: Some(title.to_string()),
            ..Shown::right(key, width)
        }
    }

    /// Left-aligned.
    pub(super) fn left(key: &'static str, width: usize) -> Shown {
        Shown {
            left: true,
            ..Shown::right(key, width)
        }
    }

    /// At least as wide as its header.
    pub(super) fn fit(self) -> Shown {
        Shown { fit: true, ..self }
    }

    /// One member of an object column, in `unit`, headed `LABEL MEMBER` (`CPU min`).
    pub(super) fn part(self, member: &'static str, unit: Unit) -> Shown {
        Shown {
            part: Some((member, unit)),
            ..self
        }
    }

    /// One member of an object column that declares its members, headed and formatted as
    /// declared (a step's `Kernel`).
    pub(super) fn member(self, member: &'static str) -> Shown {
        Shown {
            member: Some(member),
            ..self
        }
    }

    /// One member of an object column that declares its members, formatted as declared and
    /// headed by the column's label and the member's: one side of a comparison (`Base Self CPU`
    /// for `base.self_cpu_us`).
    pub(super) fn side(self, member: &'static str) -> Shown {
        Shown {
            member: Some(member),
            side: true,
            ..self
        }
    }

    /// Written with its sign (`+1.25 ms`, `-3.00 µs`): a change.
    pub(super) fn signed(self) -> Shown {
        Shown {
            signed: true,
            ..self
        }
    }

    /// Headed `title` instead of the label: a word that depends on the trace's device beyond
    /// `{device}` (Tensor Cores or Matrix Cores), or a cell that joins several columns (a device
    /// op's name with its launcher and module).
    pub(super) fn titled(self, title: &str) -> Shown {
        Shown {
            title: Some(title.to_string()),
            ..self
        }
    }
}

/// `rows` laid out as [`layout`] does, the columns `shown` headed and formatted as `R` declares
/// them (`{device}` in a label read as `device`). `own(row, column, width)` gives a cell of the
/// command's own, or `None` for the declared format.
pub(super) fn declared<'r, R: Row + 'r>(
    shown: &[Shown],
    rows: impl Iterator<Item = &'r R>,
    device: &str,
    own: impl Fn(&R, &str, usize) -> Option<String>,
) -> String {
    declared_in(&PYTORCH, shown, rows, Vec::new(), device, own)
}

/// [`declared`] set out in `style`, with `footer` (a total, made by the command with
/// [`Style::cell`]) after the rows.
pub(super) fn declared_in<'r, R: Row + 'r>(
    style: &Style,
    shown: &[Shown],
    rows: impl Iterator<Item = &'r R>,
    footer: Vec<Vec<String>>,
    device: &str,
    own: impl Fn(&R, &str, usize) -> Option<String>,
) -> String {
    // Each shown column's declaration: the member's where it shows a declared member; none for
    // a column the row does not declare.
    let decl: Vec<Option<&Declared>> = shown
        .iter()
        .map(|s| {
            if s.undeclared {
                return None;
            }
            let c =
                R::column(s.key).unwrap_or_else(|| panic!("'{}' is not a declared column", s.key));
            Some(match s.member {
                Some(m) => c
                    .part(m)
                    .unwrap_or_else(|| panic!("'{}.{m}' is not a declared member", s.key)),
                None => c,
            })
        })
        .collect();
    let cols: Vec<Column> = shown
        .iter()
        .zip(&decl)
        .map(|(s, c)| {
            let mut title = match (&s.title, c) {
                (Some(t), _) => t.clone(),
                (None, Some(c)) => c.label_for(device),
                (None, None) => unreachable!("an undeclared column has a title"),
            };
            if s.side {
                let object = R::column(s.key).expect("a declared column");
                title = format!("{} {title}", object.label_for(device));
            }
            if let Some((member, _)) = s.part {
                title = format!("{title} {member}");
            }
            let width = if s.fit {
                s.width.max(title.len())
            } else {
                s.width
            };
            Column {
                title,
                width,
                left: s.left,
            }
        })
        .collect();
    let cells = rows.map(|r| {
        let json = serde_json::to_value(r).expect("a row serializes");
        shown
            .iter()
            .zip(&decl)
            .zip(&cols)
            .map(|((s, c), col)| {
                if let Some(text) = own(r, s.key, col.width) {
                    return text;
                }
                let Some(c) = c else {
                    panic!("'{}' is not declared: its cells are the command's", s.key)
                };
                let mut v = json.get(s.key).unwrap_or(&Value::Null);
                if let Some(m) = s.member {
                    v = v.get(m).unwrap_or(&Value::Null);
                }
                match s.part {
                    Some((member, unit)) => {
                        style.cell(unit, c.digits, v.get(member).unwrap_or(&Value::Null))
                    }
                    None if s.signed => style.signed_cell(c.unit, c.digits, v),
                    None => style.cell(c.unit, c.digits, v),
                }
            })
            .collect::<Vec<String>>()
    });
    style.set_out(&cols, cells.chain(footer))
}
