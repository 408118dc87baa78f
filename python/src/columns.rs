//! A table's rows (the analysis structures as serde serializes them for `--json`) cut into Arrow
//! columns by the table's declaration (`sightline::analysis::columns`; every table Python reads
//! declares its columns): its columns and their types are the declared ones whatever the data (an
//! empty table, a column of nulls). Flat columns (integers, floats, booleans, strings) are
//! written straight into Python `bytes` objects laid out as Arrow buffers, which
//! `pyarrow.Array.from_buffers` wraps without a copy; nested columns (lists, objects) go over as
//! JSON text with their declared type for pyarrow to build, and a `Json` column is its values'
//! JSON text.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use serde_json::Value;
use sightline::analysis::columns::{Column, Type};

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

/// One tuple per declared column (`columns`, those the request asked for), in declared order:
/// `(name, kind, null_count, validity, buffer...)` for flat types, whatever the values;
/// `(name, "typed", type_json, values_json)` for lists and objects, built by pyarrow as the
/// declared type; a [`Type::Json`] column is a `utf8` column of its values' JSON text. A column
/// for which `nested` gives columns holds rows of a table of their own: a list of objects of
/// those columns.
pub fn declared<'py, 'c>(
    py: Python<'py>,
    rows: &[Value],
    columns: impl Iterator<Item = &'c Column>,
    nested: impl Fn(&Column) -> Option<&'static [Column]>,
) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for c in columns {
        if let Some(members) = nested(c) {
            let values: Vec<Value> = rows
                .iter()
                .map(|r| rows_as_text(members, r.get(c.key).unwrap_or(&Value::Null)))
                .collect();
            let member_types: Vec<(&str, Type)> = members.iter().map(|m| (m.key, m.ty)).collect();
            let ty = serde_json::json!({ "list": { "struct": member_types } });
            let ty = serde_json::to_string(&ty).map_err(value_err)?;
            let text = serde_json::to_string(&values).map_err(value_err)?;
            out.append((c.key, "typed", ty, text).into_pyobject(py)?)?;
            continue;
        }
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
                let values: Vec<Value> = values.iter().map(|v| json_as_text(c.ty, v)).collect();
                let text = serde_json::to_string(&values).map_err(value_err)?;
                (name, "typed", ty, text).into_pyobject(py)?
            }
        };
        out.append(tuple)?;
    }
    Ok(out)
}

/// `v` with each value that `ty` declares [`Type::Json`] replaced by its JSON text, as pyarrow
/// builds the declared type (a string there).
fn json_as_text(ty: Type, v: &Value) -> Value {
    match (ty, v) {
        (_, Value::Null) => Value::Null,
        (Type::Json, v) => Value::String(v.to_string()),
        (Type::List(t), Value::Array(items)) => {
            Value::Array(items.iter().map(|x| json_as_text(*t, x)).collect())
        }
        (Type::Struct(fields), Value::Object(o)) => Value::Object(
            o.iter()
                .map(|(k, x)| match fields.iter().find(|(f, _)| f == k) {
                    Some((_, t)) => (k.clone(), json_as_text(*t, x)),
                    None => (k.clone(), x.clone()),
                })
                .collect(),
        ),
        (_, v) => v.clone(),
    }
}

/// A list of rows of a table of their own ([`declared`]'s `nested`) with each member as
/// [`json_as_text`] makes it by its column's type.
fn rows_as_text(members: &[Column], v: &Value) -> Value {
    let Value::Array(rows) = v else {
        return v.clone();
    };
    let row = |r: &Value| match r {
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| match members.iter().find(|m| m.key == k) {
                    Some(m) => (k.clone(), json_as_text(m.ty, x)),
                    None => (k.clone(), x.clone()),
                })
                .collect(),
        ),
        r => r.clone(),
    };
    Value::Array(rows.iter().map(row).collect())
}

fn value_err(e: serde_json::Error) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(e.to_string())
}
