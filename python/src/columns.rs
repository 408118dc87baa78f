//! A table's rows (the analysis structures as serde serializes them for `--json`) cut into Arrow
//! columns. Flat columns (integers, floats, booleans, strings) are written straight into Python
//! `bytes` objects laid out as Arrow buffers, which `pyarrow.Array.from_buffers` wraps without a
//! copy; nested columns (lists, objects) go over as JSON text.
//!
//! A table whose rows declare their columns (`sightline::analysis::columns`: operators, kernels,
//! labels, modules, graphs, steps, idle time per stream) is cut by its declaration ([`declared`]): its columns and their types
//! are the declared ones whatever the data (an empty table, a column of nulls), nested columns
//! carry their declared type for pyarrow to build, and a `Json` column is its values' JSON text.
//! Other tables ([`columns`]) take their columns from the rows and their types from the values.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use serde_json::{Map, Value};
use sightline::analysis::columns::{Column, Type};

/// What every value of a column is (nulls aside).
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Null,
    Bool,
    Int,
    Float,
    Str,
    Nested,
}

fn kind_of(v: &Value) -> Kind {
    match v {
        Value::Null => Kind::Null,
        Value::Bool(_) => Kind::Bool,
        Value::Number(n) if n.is_f64() || n.as_i64().is_none() => Kind::Float,
        Value::Number(_) => Kind::Int,
        Value::String(_) => Kind::Str,
        Value::Array(_) | Value::Object(_) => Kind::Nested,
    }
}

/// The kind that holds both: integers widen to floats, anything else mixed is nested (JSON).
fn join(a: Kind, b: Kind) -> Kind {
    match (a, b) {
        (x, y) if x == y => x,
        (Kind::Null, y) => y,
        (x, Kind::Null) => x,
        (Kind::Int, Kind::Float) | (Kind::Float, Kind::Int) => Kind::Float,
        _ => Kind::Nested,
    }
}

/// Arrow's validity bitmap (bit set = value present), or None when nothing is null.
fn validity<'py>(py: Python<'py>, values: &[&Value]) -> (Option<Bound<'py, PyBytes>>, usize) {
    let nulls = values.iter().filter(|v| v.is_null()).count();
    if nulls == 0 {
        return (None, 0);
    }
    let bits = bitmap(py, values, |v| !v.is_null());
    (Some(bits), nulls)
}

fn bitmap<'py>(
    py: Python<'py>,
    values: &[&Value],
    set: impl Fn(&Value) -> bool,
) -> Bound<'py, PyBytes> {
    let len = values.len().div_ceil(8);
    // new_with hands over zeroed memory, so only the set bits need writing.
    PyBytes::new_with(py, len, |b| {
        for (i, v) in values.iter().enumerate() {
            if set(v) {
                b[i / 8] |= 1 << (i % 8);
            }
        }
        Ok(())
    })
    .expect("filling a bytes object cannot fail")
}

/// Eight little-endian bytes per value, written in place into a Python `bytes`.
fn fixed<'py>(
    py: Python<'py>,
    values: &[&Value],
    bytes: impl Fn(&Value) -> [u8; 8],
) -> Bound<'py, PyBytes> {
    PyBytes::new_with(py, values.len() * 8, |b| {
        for (chunk, v) in b.chunks_exact_mut(8).zip(values) {
            chunk.copy_from_slice(&bytes(v));
        }
        Ok(())
    })
    .expect("filling a bytes object cannot fail")
}

/// Arrow's utf8 layout: int32 offsets, then the characters back to back.
fn strings<'py>(
    py: Python<'py>,
    values: &[&Value],
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let text = |v: &Value| v.as_str().unwrap_or("").len();
    let total: usize = values.iter().map(|v| text(v)).sum();
    if i32::try_from(total).is_err() {
        return Err(pyo3::exceptions::PyOverflowError::new_err(
            "a string column over 2 GiB",
        ));
    }
    let offsets = PyBytes::new_with(py, (values.len() + 1) * 4, |b| {
        let mut at = 0i32;
        for (i, v) in values.iter().enumerate() {
            at += text(v) as i32;
            b[(i + 1) * 4..(i + 2) * 4].copy_from_slice(&at.to_le_bytes());
        }
        Ok(())
    })?;
    let data = PyBytes::new_with(py, total, |b| {
        let mut at = 0;
        for v in values {
            let s = v.as_str().unwrap_or("");
            b[at..at + s.len()].copy_from_slice(s.as_bytes());
            at += s.len();
        }
        Ok(())
    })?;
    Ok((offsets, data))
}

/// One tuple per column, in the order the structures declare their fields:
/// `(name, kind, null_count, validity, buffer...)` for flat kinds, `(name, "json", text)` for
/// nested ones. `sightline._tables` turns them into a `pyarrow.Table`.
pub fn columns<'py>(py: Python<'py>, rows: &[Value]) -> PyResult<Bound<'py, PyList>> {
    let empty = Map::new();
    let objects: Vec<&Map<String, Value>> = rows
        .iter()
        .map(|r| r.as_object().unwrap_or(&empty))
        .collect();
    let mut names: Vec<&str> = Vec::new();
    for o in &objects {
        for k in o.keys() {
            if !names.contains(&k.as_str()) {
                names.push(k);
            }
        }
    }
    let out = PyList::empty(py);
    for name in names {
        let values: Vec<&Value> = objects
            .iter()
            .map(|o| o.get(name).unwrap_or(&Value::Null))
            .collect();
        let kind = values.iter().map(|v| kind_of(v)).fold(Kind::Null, join);
        let (valid, nulls) = validity(py, &values);
        let valid = valid.map(Bound::into_any);
        let tuple = match kind {
            Kind::Null => (name, "null").into_pyobject(py)?,
            Kind::Bool => {
                let bits = bitmap(py, &values, |v| v.as_bool() == Some(true));
                (name, "bool", nulls, valid, bits).into_pyobject(py)?
            }
            Kind::Int => {
                let data = fixed(py, &values, |v| v.as_i64().unwrap_or(0).to_le_bytes());
                (name, "int64", nulls, valid, data).into_pyobject(py)?
            }
            Kind::Float => {
                let data = fixed(py, &values, |v| v.as_f64().unwrap_or(0.0).to_le_bytes());
                (name, "float64", nulls, valid, data).into_pyobject(py)?
            }
            Kind::Str => {
                let (offsets, data) = strings(py, &values)?;
                (name, "utf8", nulls, valid, offsets, data).into_pyobject(py)?
            }
            Kind::Nested => {
                let text = serde_json::to_string(&values)
                    .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
                (name, "json", text).into_pyobject(py)?
            }
        };
        out.append(tuple)?;
    }
    Ok(out)
}

/// One tuple per declared column (`columns`, those the request asked for), in declared order:
/// `(name, kind, null_count, validity, buffer...)` for flat types, whatever the values;
/// `(name, "typed", type_json, values_json)` for lists and objects, built by pyarrow as the
/// declared type; a [`Type::Json`] column is a `utf8` column of its values' JSON text.
pub fn declared<'py, 'c>(
    py: Python<'py>,
    rows: &[Value],
    columns: impl Iterator<Item = &'c Column>,
) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for c in columns {
        let values: Vec<&Value> = rows
            .iter()
            .map(|r| r.get(c.key).unwrap_or(&Value::Null))
            .collect();
        let name = c.key;
        let (valid, nulls) = validity(py, &values);
        let valid = valid.map(Bound::into_any);
        let tuple = match c.ty {
            Type::Bool => {
                let bits = bitmap(py, &values, |v| v.as_bool() == Some(true));
                (name, "bool", nulls, valid, bits).into_pyobject(py)?
            }
            Type::Int => {
                let data = fixed(py, &values, |v| v.as_i64().unwrap_or(0).to_le_bytes());
                (name, "int64", nulls, valid, data).into_pyobject(py)?
            }
            Type::Float => {
                let data = fixed(py, &values, |v| v.as_f64().unwrap_or(0.0).to_le_bytes());
                (name, "float64", nulls, valid, data).into_pyobject(py)?
            }
            Type::Str => {
                let (offsets, data) = strings(py, &values)?;
                (name, "utf8", nulls, valid, offsets, data).into_pyobject(py)?
            }
            Type::Json => {
                let texts: Vec<Value> = values
                    .iter()
                    .map(|v| match v {
                        Value::Null => Value::Null,
                        v => Value::String(v.to_string()),
                    })
                    .collect();
                let refs: Vec<&Value> = texts.iter().collect();
                let (offsets, data) = strings(py, &refs)?;
                (name, "utf8", nulls, valid, offsets, data).into_pyobject(py)?
            }
            Type::List(_) | Type::Struct(_) => {
                let ty = serde_json::to_string(&c.ty).map_err(value_err)?;
                let text = serde_json::to_string(&values).map_err(value_err)?;
                (name, "typed", ty, text).into_pyobject(py)?
            }
        };
        out.append(tuple)?;
    }
    Ok(out)
}

fn value_err(e: serde_json::Error) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(e.to_string())
}
