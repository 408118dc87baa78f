//! The tables' columns, declared once beside each row type: a column's key (the JSON field, a
//! contract), its label, its unit, its stored type, what it means, and the table's default sort.
//! Every front end lays its tables out from these declarations: the CLI's text tables (labels,
//! formatting by unit), the page (the columns travel beside the rows), Python's Arrow schema (the
//! declared type, whatever the data) and the column reference in `docs/columns.md`.
//!
//! A row type implements [`Row`]; its [`Row::COLUMNS`] are in the order serde writes its fields,
//! and `tests/columns.rs` checks that on every fixture (keys, order and each value's type). Adding
//! a column is a field of the row and one [`Column`] in its declaration.
//!
//! Nothing here does I/O or knows a front end; a label may hold `{device}`, which each front end
//! replaces with the trace's word for its device (`CUDA` in the operator table's text, as
//! PyTorch heads it; `GPU`, `MTIA`, ... elsewhere).

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;

/// What a column's values measure, which says how a front end shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Words: a name, a kind.
    Text,
    /// A number of things (calls, launches).
    Count,
    /// Nanoseconds.
    Ns,
    /// Microseconds (PyTorch's unit for its tables).
    Us,
    /// Bytes.
    Bytes,
    /// A percentage, 0 to 100.
    Pct,
    /// A share from 0 to 1 (a device's utilization), shown as a percentage.
    Fraction,
    /// NEW over BASE (a comparison), shown as the change in percent: 1.485 as +48.5%; none where
    /// BASE is zero (shown as "new").
    Ratio,
    /// A figure whose unit the label names (GFLOPs, TFLOP/s, FLOP/B, blocks per SM).
    Number,
    /// Yes or no.
    Flag,
    /// A list or an object (input shapes, launchers): shown as data, not a figure.
    Data,
}

impl Unit {
    /// The unit as it is serialized: `us`, `pct`, ...
    pub fn name(self) -> &'static str {
        match self {
            Unit::Text => "text",
            Unit::Count => "count",
            Unit::Ns => "ns",
            Unit::Us => "us",
            Unit::Bytes => "bytes",
            Unit::Pct => "pct",
            Unit::Fraction => "fraction",
            Unit::Ratio => "ratio",
            Unit::Number => "number",
            Unit::Flag => "flag",
            Unit::Data => "data",
        }
    }

    /// The type a unit's values have unless a column says otherwise.
    const fn default_type(self) -> Type {
        match self {
            Unit::Text => Type::Str,
            Unit::Count | Unit::Ns | Unit::Bytes => Type::Int,
            Unit::Us | Unit::Pct | Unit::Fraction | Unit::Ratio | Unit::Number => Type::Float,
            Unit::Flag => Type::Bool,
            Unit::Data => Type::Json,
        }
    }
}

/// How a column's values are stored: the JSON they serialize to, and the Arrow type Python gives
/// the column whatever the data (an empty table, a column of nulls). Any value may be null.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    feature = "ts",
    derive(ts_rs::TS),
    ts(
        rename = "ColumnType",
        type = r#""int64" | "float64" | "bool" | "string" | "json" | { list: ColumnType } | { struct: Array<[string, ColumnType]> }"#
    )
)]
pub enum Type {
    /// A 64-bit integer (JSON number without a fraction).
    Int,
    /// A 64-bit float.
    Float,
    Bool,
    Str,
    /// A list of values of one type.
    List(&'static Type),
    /// An object with these members, in this order.
    Struct(&'static [(&'static str, Type)]),
    /// Any JSON value, carried as its text: values that have no one type (input shapes, which
    /// nest deeper for a list of tensors).
    Json,
}

impl Type {
    /// The type's name in the reference and in Arrow's words: `int64`, `list<double>`, ...
    pub fn describe(&self) -> String {
        match self {
            Type::Int => "int64".into(),
            Type::Float => "float64".into(),
            Type::Bool => "bool".into(),
            Type::Str => "string".into(),
            Type::Json => "string (JSON)".into(),
            Type::List(t) => format!("list<{}>", t.describe()),
            Type::Struct(fields) => {
                let f: Vec<String> = fields
                    .iter()
                    .map(|(k, t)| format!("{k}: {}", t.describe()))
                    .collect();
                format!("struct<{}>", f.join(", "))
            }
        }
    }

    /// Whether `v` is a value of this type (null is a value of every type; an object's members
    /// are matched by name, in any order).
    pub fn holds(&self, v: &serde_json::Value) -> bool {
        use serde_json::Value as V;
        match (self, v) {
            (_, V::Null) | (Type::Json, _) => true,
            (Type::Int, V::Number(n)) => n.is_i64() || n.is_u64(),
            (Type::Float, V::Number(_)) => true,
            (Type::Bool, V::Bool(_)) | (Type::Str, V::String(_)) => true,
            (Type::List(t), V::Array(items)) => items.iter().all(|x| t.holds(x)),
            (Type::Struct(fields), V::Object(o)) => {
                o.len() == fields.len()
                    && fields
                        .iter()
                        .all(|(k, t)| o.get(*k).is_some_and(|x| t.holds(x)))
            }
            _ => false,
        }
    }
}

/// Serialized as the page and Python read it: `"int64"`, `"float64"`, `"bool"`, `"string"`,
/// `"json"`, `{"list": T}`, `{"struct": [[key, T], ...]}`.
impl Serialize for Type {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Type::Int => s.serialize_str("int64"),
            Type::Float => s.serialize_str("float64"),
            Type::Bool => s.serialize_str("bool"),
            Type::Str => s.serialize_str("string"),
            Type::Json => s.serialize_str("json"),
            Type::List(t) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("list", t)?;
                m.end()
            }
            Type::Struct(fields) => {
                struct Fields(&'static [(&'static str, Type)]);
                impl Serialize for Fields {
                    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                        let mut q = s.serialize_seq(Some(self.0.len()))?;
                        for f in self.0 {
                            q.serialize_element(f)?;
                        }
                        q.end()
                    }
                }
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("struct", &Fields(fields))?;
                m.end()
            }
        }
    }
}

/// One column of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Column {
    /// The JSON field: a contract with every user of `--json`, MCP and Python; never renamed.
    pub key: &'static str,
    /// The header every front end shows (the CLI's text, the page); `{device}` is the trace's
    /// word for its device.
    pub label: &'static str,
    pub unit: Unit,
    #[serde(rename = "type")]
    pub ty: Type,
    /// Decimals a text shows of a percentage or a figure ([`Unit::Pct`], [`Unit::Fraction`],
    /// [`Unit::Ratio`], [`Unit::Number`]).
    pub digits: u8,
    /// What it holds, as the reference and the page's header tooltip say it.
    pub about: &'static str,
    /// The request flag that adds the column (`path`); `None`: always there.
    pub with: Option<&'static str>,
    /// An object column's members as columns of their own (a step's time per category), each
    /// with its label and unit, in the order of its [`Type::Struct`]; empty for other columns.
    #[serde(skip_serializing_if = "<[Column]>::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<Column>>", optional))]
    pub parts: &'static [Column],
    /// Left out of a row that has no value rather than written as null (an Inductor kernel's
    /// generated source, which only some traces name): a reader takes it as null.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub sometimes: bool,
    /// Other names a request may sort by it with (PyTorch's `sort_by` names for the operator
    /// table's columns: `self_cpu_time_total`, ...).
    #[serde(skip)]
    pub aliases: &'static [&'static str],
}

impl Column {
    /// A column whose values have its unit's usual type (integers for counts, ns and bytes,
    /// floats for us, percentages and figures, text, flags, data as JSON), shown with two
    /// decimals where decimals apply.
    pub const fn new(
        key: &'static str,
        label: &'static str,
        unit: Unit,
        about: &'static str,
    ) -> Column {
        Column {
            key,
            label,
            unit,
            ty: unit.default_type(),
            digits: 2,
            about,
            with: None,
            parts: &[],
            sometimes: false,
            aliases: &[],
        }
    }

    /// The same column, stored as `ty`.
    pub const fn typed(self, ty: Type) -> Column {
        Column { ty, ..self }
    }

    /// The same column, shown with `digits` decimals.
    pub const fn digits(self, digits: u8) -> Column {
        Column { digits, ..self }
    }

    /// The same column, there only when the request's `flag` asks for it.
    pub const fn with(self, flag: &'static str) -> Column {
        Column {
            with: Some(flag),
            ..self
        }
    }

    /// The same column, an object whose members are `parts` (its type a [`Type::Struct`] of
    /// their keys and types, which `tests/columns.rs` checks).
    pub const fn parts(self, parts: &'static [Column]) -> Column {
        Column { parts, ..self }
    }

    /// The same column, which a request may also name as one of `aliases`.
    pub const fn aliases(self, aliases: &'static [&'static str]) -> Column {
        Column { aliases, ..self }
    }

    /// The same column, left out of a row that has no value.
    pub const fn sometimes(self) -> Column {
        Column {
            sometimes: true,
            ..self
        }
    }

    /// The member `key` of an object column ([`Column::parts`]).
    pub fn part(&self, key: &str) -> Option<&'static Column> {
        self.parts.iter().find(|c| c.key == key)
    }

    /// The label with `{device}` replaced by `device`.
    pub fn label_for(&self, device: &str) -> String {
        self.label.replace("{device}", device)
    }
}

/// The order a table's rows come in, unless a request asks for another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    feature = "ts",
    derive(ts_rs::TS),
    ts(type = "{ key: string | null, without_device?: string, descending: boolean }")
)]
pub enum Sort {
    /// Largest first by this column (ties by name).
    Largest(&'static str),
    /// Smallest first by this column.
    Smallest(&'static str),
    /// Largest first by the first column when the table has device time, else by the second.
    DeviceElse(&'static str, &'static str),
    /// A tree: each row after its parent, siblings by first call.
    Tree,
    /// In the order the trace first ran them (compiled frames, graphs and kernels): an order no
    /// column holds.
    FirstRun,
    /// Largest change first: by the sum of these columns' magnitudes (a comparison's rows, which
    /// grew or shrank), an order no one column holds.
    Change(&'static [&'static str]),
    /// In the order the analysis ranks them, which no one column holds (the findings: by the
    /// time their fix saves, a member of an object); the words say how, for the reference.
    Ranked(&'static str),
}

impl Sort {
    /// The column a viewer sorts by at first, given whether the table has device time; `None`
    /// for a tree, which keeps its order.
    pub fn key(self, device: bool) -> Option<&'static str> {
        match self {
            Sort::Largest(k) | Sort::Smallest(k) => Some(k),
            Sort::DeviceElse(d, _) if device => Some(d),
            Sort::DeviceElse(_, k) => Some(k),
            Sort::Tree | Sort::FirstRun | Sort::Change(_) | Sort::Ranked(_) => None,
        }
    }

    /// Whether the largest come first.
    pub fn descending(self) -> bool {
        !matches!(self, Sort::Smallest(_) | Sort::FirstRun | Sort::Ranked(_))
    }

    /// The sort in words, for the reference.
    pub fn describe(self) -> String {
        match self {
            Sort::Largest(k) => format!("`{k}`, largest first"),
            Sort::Smallest(k) => format!("`{k}`, smallest first"),
            Sort::DeviceElse(d, k) => {
                format!("`{d}`, largest first; `{k}` when the trace has no device time")
            }
            Sort::Tree => "tree order: each row after its parent, siblings by first call".into(),
            Sort::FirstRun => "the order they first ran in".into(),
            Sort::Change(keys) => {
                let keys: Vec<String> = keys.iter().map(|k| format!("|`{k}`|")).collect();
                format!("the largest change first: {}", keys.join(" + "))
            }
            Sort::Ranked(how) => how.into(),
        }
    }
}

impl Serialize for Sort {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        match self {
            Sort::Largest(k) | Sort::Smallest(k) => m.serialize_entry("key", k)?,
            Sort::DeviceElse(d, k) => {
                m.serialize_entry("key", d)?;
                m.serialize_entry("without_device", k)?;
            }
            Sort::Tree | Sort::FirstRun | Sort::Change(_) | Sort::Ranked(_) => {
                m.serialize_entry("key", &None::<&str>)?
            }
        }
        m.serialize_entry("descending", &self.descending())?;
        m.end()
    }
}

/// A row type of a table, with its columns declared.
pub trait Row: Serialize {
    /// The columns, in the order serde writes the row's fields (flattened ones included).
    const COLUMNS: &'static [Column];
    /// The order the rows come in.
    const SORT: Sort;

    /// The column with this key.
    fn column(key: &str) -> Option<&'static Column> {
        Self::COLUMNS.iter().find(|c| c.key == key)
    }
}

/// A table whose rows declare their columns, as the reference and the front ends name it.
#[derive(Debug, Clone, Copy)]
pub struct Table {
    /// The command that prints it (`ops`), also the page's and Python's name for it; of a
    /// command that prints more than one (`idle`), the first listed is the one they name.
    pub name: &'static str,
    /// The member of the answer that holds the rows (`rows`, `graphs`); `graphs[].kernels`: the
    /// `kernels` of each row of `graphs` (a compiled graph's Inductor kernels); `steps.pairs`: the
    /// member `pairs` of the member `steps` (a comparison's steps side by side).
    pub rows: &'static str,
    /// What its rows are.
    pub title: &'static str,
    pub columns: &'static [Column],
    pub sort: Sort,
}

impl Table {
    pub const fn of<R: Row>(name: &'static str, rows: &'static str, title: &'static str) -> Table {
        Table {
            name,
            rows,
            title,
            columns: R::COLUMNS,
            sort: R::SORT,
        }
    }

    /// The columns a request with `flags` gets: those it did not ask for left out.
    pub fn shown<'f>(&self, flags: &'f [&'f str]) -> impl Iterator<Item = &'static Column> + 'f {
        self.columns
            .iter()
            .filter(move |c| c.with.is_none_or(|f| flags.contains(&f)))
    }
}

/// An answer with its table's declaration beside its rows, as the page receives it: `columns`
/// (those `flags` ask for) and `sort`, then the answer's own members.
#[derive(Serialize)]
pub struct WithColumns<'a, T: Serialize> {
    pub columns: Vec<&'static Column>,
    pub sort: Sort,
    #[serde(flatten)]
    pub answer: &'a T,
}

impl<'a, T: Serialize> WithColumns<'a, T> {
    pub fn new(table: &Table, flags: &[&str], answer: &'a T) -> Self {
        WithColumns {
            columns: table.shown(flags).collect(),
            sort: table.sort,
            answer,
        }
    }
}

/// One table's declaration as the page receives it: its `columns` (those the request's flags
/// ask for) and `sort`.
#[derive(Serialize)]
pub struct Declaration {
    pub columns: Vec<&'static Column>,
    pub sort: Sort,
}

/// An answer with the declarations of its command's tables beside it, as the page receives a
/// command that prints more than one (`compiled`): `tables`, by the member that holds each
/// table's rows (`graphs`, `graphs[].kernels`, ...), then the answer's own members.
#[derive(Serialize)]
pub struct WithTables<'a, T: Serialize> {
    pub tables: BTreeMap<&'static str, Declaration>,
    #[serde(flatten)]
    pub answer: &'a T,
}

impl<'a, T: Serialize> WithTables<'a, T> {
    pub fn new<'t>(
        tables: impl IntoIterator<Item = &'t Table>,
        flags: &[&str],
        answer: &'a T,
    ) -> Self {
        let tables = tables
            .into_iter()
            .map(|t| {
                let d = Declaration {
                    columns: t.shown(flags).collect(),
                    sort: t.sort,
                };
                (t.rows, d)
            })
            .collect();
        WithTables { tables, answer }
    }
}

/// The column reference (`docs/columns.md`'s generated section): per table its columns' keys,
/// labels, units, types and meanings, and its sort.
pub fn reference(tables: &[Table]) -> String {
    let mut out = String::new();
    for t in tables {
        out.push_str(&format!(
            "### {} (`{}`)

",
            t.title, t.name
        ));
        out.push_str(&format!(
            "Rows under `{}`, sorted by {}.\n\n",
            t.rows,
            t.sort.describe()
        ));
        out.push_str("| key | label | unit | type | meaning |\n|---|---|---|---|---|\n");
        for c in t.columns {
            let with = c.with.map_or(String::new(), |f| format!(" (with `{f}`)"));
            let with = if c.sometimes {
                format!("{with} (left out when none)")
            } else {
                with
            };
            let with = if c.aliases.is_empty() {
                with
            } else {
                let names: Vec<String> = c.aliases.iter().map(|a| format!("`{a}`")).collect();
                format!("{with} (`--sort` also takes {})", names.join(", "))
            };
            out.push_str(&format!(
                "| `{}` | {} | {} | {} | {}{with} |\n",
                c.key,
                c.label.replace('|', "\\|"),
                c.unit.name(),
                c.ty.describe(),
                c.about.replace('|', "\\|"),
            ));
            for p in c.parts {
                out.push_str(&format!(
                    "| `{}.{}` | {} | {} | {} | {} |\n",
                    c.key,
                    p.key,
                    p.label.replace('|', "\\|"),
                    p.unit.name(),
                    p.ty.describe(),
                    p.about.replace('|', "\\|"),
                ));
            }
        }
        out.push('\n');
    }
    out
}

/// Spans of time as the tables give them: minimum, median, maximum (`labels`' per-instance).
pub const SPREAD: Type = Type::Struct(&[
    ("min", Type::Float),
    ("median", Type::Float),
    ("max", Type::Float),
]);

/// A slice of the trace, as `{lane, index}`.
pub const SLICE_REF: Type = Type::Struct(&[("lane", Type::Int), ("index", Type::Int)]);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_serialize_as_the_page_and_python_read_them() {
        let t = Type::List(&SPREAD);
        assert_eq!(
            serde_json::to_string(&t).unwrap(),
            r#"{"list":{"struct":[["min","float64"],["median","float64"],["max","float64"]]}}"#
        );
        assert_eq!(
            t.describe(),
            "list<struct<min: float64, median: float64, max: float64>>"
        );
        let v = serde_json::json!([{"min": 1, "median": 2.5, "max": null}]);
        assert!(t.holds(&v));
        assert!(!t.holds(&serde_json::json!([{"min": 1, "max": 2}])));
        assert!(!t.holds(&serde_json::json!([{"min": 1, "max": 2, "median": "3"}])));
        assert!(!Type::Int.holds(&serde_json::json!(1.5)));
        assert!(Type::Float.holds(&serde_json::json!(1)));
    }

    #[test]
    fn an_objects_declared_members_travel_with_it() {
        const PARTS: &[Column] = &[Column::new("a_ns", "A", Unit::Ns, "a")];
        const C: Column = Column::new("o", "O", Unit::Ns, "o")
            .typed(Type::Struct(&[("a_ns", Type::Int)]))
            .parts(PARTS);
        let v = serde_json::to_value(C).unwrap();
        assert_eq!(v["parts"][0]["label"], "A");
        assert_eq!(C.part("a_ns").map(|p| p.label), Some("A"));
        // A column without members says nothing of them.
        let plain = serde_json::to_value(PARTS[0]).unwrap();
        assert!(plain.get("parts").is_none());
        assert!(reference(&[Table {
            name: "t",
            rows: "rows",
            title: "T",
            columns: &[C],
            sort: Sort::Tree,
        }])
        .contains("| `o.a_ns` | A | ns | int64 | a |"));
    }

    #[test]
    fn a_comparison_keeps_its_own_order() {
        // No one column holds the order (the magnitudes of two changes), so a viewer keeps it.
        let by = Sort::Change(&["delta_a_us", "delta_b_us"]);
        assert_eq!(by.key(true), None);
        assert_eq!(
            serde_json::to_string(&by).unwrap(),
            r#"{"key":null,"descending":true}"#
        );
        assert_eq!(
            by.describe(),
            "the largest change first: |`delta_a_us`| + |`delta_b_us`|"
        );
    }

    #[test]
    fn several_tables_travel_by_the_member_of_their_rows() {
        const COLS: &[Column] = &[
            Column::new("a", "A", Unit::Count, "a"),
            Column::new("b", "B", Unit::Count, "b").with("path"),
        ];
        let t = |rows| Table {
            name: "t",
            rows,
            title: "T",
            columns: COLS,
            sort: Sort::Ranked("as ranked"),
        };
        let answer = serde_json::json!({ "x": 1 });
        let v =
            serde_json::to_value(WithTables::new(&[t("xs"), t("xs[].ys")], &[], &answer)).unwrap();
        assert_eq!(v["x"], 1);
        // The columns the flags did not ask for are left out, as beside one table.
        assert_eq!(
            v["tables"]["xs[].ys"]["columns"].as_array().unwrap().len(),
            1
        );
        assert_eq!(
            v["tables"]["xs"]["sort"],
            serde_json::json!({ "key": null, "descending": false })
        );
    }

    #[test]
    fn a_column_takes_its_units_type_unless_told() {
        const C: Column = Column::new("bytes", "Bytes", Unit::Bytes, "x")
            .typed(Type::Float)
            .digits(1)
            .with("path");
        assert_eq!((C.ty, C.digits, C.with), (Type::Float, 1, Some("path")));
        assert_eq!(Column::new("n", "N", Unit::Count, "").ty, Type::Int);
        assert_eq!(
            Column::new("x", "Self {device} %", Unit::Pct, "").label_for("CUDA"),
            "Self CUDA %"
        );
    }
}
