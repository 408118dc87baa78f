//! FLOPs and bytes moved of one operator call, from its `Input Dims`, `Input type` and
//! `Concrete Inputs`, defined as AMD TraceLens defines them (its `perf_model.py`), so that the
//! numbers can be set beside its reports:
//!
//! - GEMM (`aten::mm`, `addmm`, `bmm`, `baddbmm`): FLOPs `B·(2·M·N·K + M·N if bias)`, bytes
//!   `B·(M·K + K·N + M·N + N if bias)·bpe`, bpe of A's dtype. `aten::matmul` and `aten::linear`
//!   are counted through the GEMM they call (they are not modelled themselves, so nothing counts
//!   twice).
//! - Convolution (`aten::convolution`): FLOPs `2·N·Cout·prod(out spatial)·Cin/groups·prod(kernel)`
//!   (PyTorch's `flop_counter`); bytes input + weight + output (the bias, as its FLOPs, is
//!   not counted).
//!   `aten::convolution_backward`: the FLOPs of the gradients its output mask asks for (each one a
//!   forward's worth); bytes grad output, input and weight read, the asked gradients written.
//! - Attention (`aten::_scaled_dot_product_{flash,efficient,cudnn}_attention`): FLOPs
//!   `2·B·H·Nq·Nkv·(d_qk + d_v)`, halved when causal; bytes Q + K + V + O. The backward ops: 2.5
//!   times the forward FLOPs (five matrix products for two), bytes Q, K, V, O, dO read and dQ,
//!   dK, dV written. The math fallback is counted through the `bmm`s it calls.
//! - Elementwise: unary (`copy_`, `sigmoid`, `relu`, `gelu`, ...) FLOPs = elements, bytes =
//!   elements·(bpe in + bpe out), in the argument's dtype (for `copy_(self, src)`, `self`'s
//!   elements at `self`'s plus `src`'s dtype, or `self`'s twice for a 0-dim `src`); binary (`add`, `sub`, `mul`, `div` and in-place forms) FLOPs =
//!   elements of the broadcast output, bytes = both inputs + output, the output in the first
//!   input's dtype when the second is a 0-dim scalar, else in the wider of the two (TraceLens's
//!   rule).
//! - Normalization (`aten::layer_norm`, `aten::native_layer_norm`): FLOPs `5·N + 6·C`, bytes
//!   `(2·N + 6·C)·bpe` with affine weight and bias (`C` = normalized elements); `5·N` and `2·N·bpe`
//!   without. TraceLens lists both the op and its `native_` callee; so do we (the roofline shows
//!   rows, it does not add them up).
//! - Reduction (`aten::sum`, `mean`, `amax`, `amin`, `max`, `min`, `linalg_vector_norm`,
//!   `linalg_norm`, `norm`): FLOPs = input elements; bytes = input + output. Here we differ from
//!   TraceLens on purpose: it counts the output as one element whatever the reduced dims; we size
//!   it from the dims and `keepdim` (a row-wise norm of a 5184x768 tensor writes 5184 values).
//!
//! An op that has none of these but carries PyTorch's own `flops` arg (`with_flops=True`) gets
//! those FLOPs and no bytes; the row says which was used.

use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Family {
    Gemm,
    Conv,
    Attention,
    Elementwise,
    Normalization,
    Reduction,
    /// Only PyTorch's `flops` arg is known.
    Other,
}

impl Family {
    /// Runs on Tensor/Matrix Cores.
    pub fn matrix(self) -> bool {
        matches!(self, Family::Gemm | Family::Conv | Family::Attention)
    }
}

/// The cost of one call.
#[derive(Debug, Clone, PartialEq)]
pub struct Cost {
    pub family: Family,
    pub flops: u64,
    /// Bytes moved to and from device memory (unknown for PyTorch's `flops` alone).
    pub bytes: Option<u64>,
    /// Short dtype name (`bf16`, `fp32`, ...) of the operands that set the speed.
    pub dtype: &'static str,
}

/// Short name of a PyTorch `Input type` string, `""` for non-tensors.
pub fn short_dtype(t: &str) -> &'static str {
    match t {
        "c10::BFloat16" => "bf16",
        "c10::Half" => "fp16",
        "float" => "fp32",
        "double" => "fp64",
        "int" => "int32",
        "long int" => "int64",
        "short int" => "int16",
        "signed char" => "int8",
        "unsigned char" => "uint8",
        "bool" => "bool",
        "c10::complex<float>" => "complex64",
        "c10::complex<double>" => "complex128",
        t if t.starts_with("c10::Float8") => "fp8",
        _ => "",
    }
}

/// Bytes per element of a short dtype name.
pub fn bytes_per_element(d: &str) -> Option<u64> {
    Some(match d {
        "fp8" | "int8" | "uint8" | "bool" => 1,
        "bf16" | "fp16" | "int16" => 2,
        "fp32" | "int32" => 4,
        "fp64" | "int64" | "complex64" => 8,
        "complex128" => 16,
        _ => return None,
    })
}

/// The arguments of one call as the trace recorded them.
pub struct Call<'a> {
    pub name: &'a str,
    pub dims: &'a [Value],
    pub types: &'a [Value],
    pub concrete: &'a [Value],
}

impl Call<'_> {
    fn shape(&self, i: usize) -> Option<Vec<u64>> {
        let v = self.dims.get(i)?.as_array()?;
        v.iter().map(|x| x.as_u64()).collect()
    }

    fn dtype(&self, i: usize) -> &'static str {
        self.types
            .get(i)
            .and_then(Value::as_str)
            .map_or("", short_dtype)
    }

    fn concrete(&self, i: usize) -> &str {
        self.concrete.get(i).and_then(Value::as_str).unwrap_or("")
    }

    fn concrete_ints(&self, i: usize) -> Option<Vec<i64>> {
        let s = self.concrete(i);
        serde_json::from_str::<Vec<i64>>(s)
            .ok()
            .or_else(|| s.parse::<i64>().ok().map(|x| vec![x]))
    }

    fn is_true(&self, i: usize) -> bool {
        self.concrete(i) == "True"
    }
}

fn numel(shape: &[u64]) -> u64 {
    shape.iter().product()
}

/// A cost model: the cost of a call, or `None` for shapes it cannot read.
pub type Model = fn(&Call) -> Option<Cost>;

/// The cost model of an operator name, if it has one.
pub fn model_of(name: &str) -> Option<Model> {
    let name = name.strip_prefix("aten::")?;
    Some(match name {
        "mm" => |c| gemm(c, 0, false, false),
        "addmm" => |c| gemm(c, 1, true, false),
        "bmm" => |c| gemm(c, 0, false, true),
        "baddbmm" => |c| gemm(c, 1, true, true),
        "convolution" => conv,
        "convolution_backward" => conv_backward,
        "_scaled_dot_product_flash_attention" => |c| attention(c, 0, 4, false),
        "_scaled_dot_product_efficient_attention" | "_scaled_dot_product_cudnn_attention" => {
            |c| attention(c, 0, 6, false)
        }
        "_scaled_dot_product_flash_attention_backward"
        | "_scaled_dot_product_efficient_attention_backward" => |c| attention(c, 1, 11, true),
        "_scaled_dot_product_cudnn_attention_backward" => |c| attention(c, 1, 14, true),
        "layer_norm" | "native_layer_norm" => layer_norm,
        "add" | "add_" | "sub" | "sub_" | "rsub" | "mul" | "mul_" | "div" | "div_" | "maximum"
        | "minimum" => binary,
        "copy_" => copy,
        "sigmoid" | "sigmoid_" | "relu" | "relu_" | "gelu" | "gelu_" | "silu" | "silu_"
        | "tanh" | "tanh_" | "exp" | "exp_" | "log" | "neg" | "sqrt" | "rsqrt" | "abs"
        | "reciprocal" | "erf" | "sin" | "cos" | "clone" => |c| unary(c, 0, 0),
        "sum" | "mean" | "amax" | "amin" | "max" | "min" => |c| reduction(c, 1),
        "linalg_vector_norm" | "linalg_norm" | "norm" => |c| reduction(c, 2),
        _ => return None,
    })
}

/// True for the ops whose FLOPs PyTorch itself counts with `with_flops=True` (its
/// `computeFlops`: matrix products, 2-D convolutions, `add` and `mul`).
pub fn counted_by_pytorch(name: &str) -> bool {
    matches!(
        name,
        "aten::mm"
            | "aten::addmm"
            | "aten::bmm"
            | "aten::baddbmm"
            | "aten::conv2d"
            | "aten::add"
            | "aten::add_"
            | "aten::mul"
            | "aten::mul_"
    )
}

/// The cost of a call, or `None` for an op without a model (or shapes it cannot read).
pub fn cost(call: &Call) -> Option<Cost> {
    model_of(call.name)?(call)
}

fn gemm(call: &Call, a: usize, bias: bool, batched: bool) -> Option<Cost> {
    let (sa, sb) = (call.shape(a)?, call.shape(a + 1)?);
    let (b, m, k, n) = if batched {
        match (sa.as_slice(), sb.as_slice()) {
            ([b, m, k], [_, _, n]) => (*b, *m, *k, *n),
            _ => return None,
        }
    } else {
        match (sa.as_slice(), sb.as_slice()) {
            ([m, k], [_, n]) => (1, *m, *k, *n),
            _ => return None,
        }
    };
    let dtype = call.dtype(a);
    let bpe = bytes_per_element(dtype)?;
    let flops = 2 * m * n * k + if bias { m * n } else { 0 };
    let bytes = (m * k + k * n + m * n + if bias { n } else { 0 }) * bpe;
    Some(Cost {
        family: Family::Gemm,
        flops: b * flops,
        bytes: Some(b * bytes),
        dtype,
    })
}

/// Output spatial sizes of a convolution.
fn conv_out(x: &[u64], w: &[u64], call: &Call, first: usize, transposed: bool) -> Option<Vec<u64>> {
    let dims = x.len().checked_sub(2)?;
    let pick = |v: Option<Vec<i64>>, default: i64| -> Vec<i64> {
        match v {
            Some(v) if v.len() == dims => v,
            Some(v) if v.len() == 1 => vec![v[0]; dims],
            _ => vec![default; dims],
        }
    };
    let stride = pick(call.concrete_ints(first), 1);
    let padding = pick(call.concrete_ints(first + 1), 0);
    let dilation = pick(call.concrete_ints(first + 2), 1);
    let out_pad = pick(call.concrete_ints(first + 4), 0);
    (0..dims)
        .map(|i| {
            let (input, k) = (x[2 + i] as i64, w[2 + i] as i64);
            let o = if transposed {
                (input - 1) * stride[i] - 2 * padding[i] + dilation[i] * (k - 1) + out_pad[i] + 1
            } else {
                (input + 2 * padding[i] - dilation[i] * (k - 1) - 1) / stride[i].max(1) + 1
            };
            u64::try_from(o).ok()
        })
        .collect()
}

/// FLOPs of one convolution pass and the shapes' element counts (input, weight, output).
fn conv_parts(call: &Call, x: usize, first: usize) -> Option<(u64, u64, u64, u64)> {
    let (xs, ws) = (call.shape(x)?, call.shape(x + 1)?);
    if xs.len() < 3 || ws.len() != xs.len() {
        return None;
    }
    let transposed = call.is_true(first + 3);
    let groups = call.concrete(first + 5).parse::<u64>().unwrap_or(1).max(1);
    let out = conv_out(&xs, &ws, call, first, transposed)?;
    let (n, cin) = (xs[0], xs[1]);
    let cout = if transposed { ws[1] * groups } else { ws[0] };
    let kernel: u64 = ws[2..].iter().product();
    // flop_counter: for a transposed convolution the roles of input and output spatial swap.
    let spatial = if transposed {
        numel(&xs[2..])
    } else {
        numel(&out)
    };
    let flops = 2 * n * spatial * cout * (cin / groups) * kernel;
    let out_elems = n * cout * numel(&out);
    Some((flops, numel(&xs), numel(&ws), out_elems))
}

fn conv(call: &Call) -> Option<Cost> {
    let dtype = call.dtype(0);
    let bpe = bytes_per_element(dtype)?;
    let (flops, x, w, o) = conv_parts(call, 0, 3)?;
    Some(Cost {
        family: Family::Conv,
        flops,
        bytes: Some((x + w + o) * bpe),
        dtype,
    })
}

fn conv_backward(call: &Call) -> Option<Cost> {
    let dtype = call.dtype(1);
    let bpe = bytes_per_element(dtype)?;
    let (flops, x, w, o) = conv_parts(call, 1, 4)?;
    let mask = call.concrete(10);
    let (grad_in, grad_w) = if mask.is_empty() {
        (true, true)
    } else {
        let m: Vec<&str> = mask
            .trim_matches(['[', ']'])
            .split(',')
            .map(str::trim)
            .collect();
        (m.first() == Some(&"True"), m.get(1) == Some(&"True"))
    };
    let passes = u64::from(grad_in) + u64::from(grad_w);
    let written = if grad_in { x } else { 0 } + if grad_w { w } else { 0 };
    Some(Cost {
        family: Family::Conv,
        flops: flops * passes,
        bytes: Some((o + x + w + written) * bpe),
        dtype,
    })
}

fn attention(call: &Call, q: usize, causal_at: usize, backward: bool) -> Option<Cost> {
    let (qs, ks, vs) = (call.shape(q)?, call.shape(q + 1)?, call.shape(q + 2)?);
    let ([b, h, nq, dqk], [_, _, nkv, _], [_, _, _, dv]) =
        (qs.as_slice(), ks.as_slice(), vs.as_slice())
    else {
        return None;
    };
    let dtype = call.dtype(q);
    let bpe = bytes_per_element(dtype)?;
    let mut flops = 2 * b * h * nq * nkv * (dqk + dv);
    if call.is_true(causal_at) {
        flops /= 2;
    }
    let (qe, ke, ve, oe) = (numel(&qs), numel(&ks), numel(&vs), b * h * nq * dv);
    let (flops, elems) = if backward {
        (flops * 5 / 2, 2 * (qe + ke + ve) + 2 * oe)
    } else {
        (flops, qe + ke + ve + oe)
    };
    Some(Cost {
        family: Family::Attention,
        flops,
        bytes: Some(elems * bpe),
        dtype,
    })
}

fn layer_norm(call: &Call) -> Option<Cost> {
    let x = call.shape(0)?;
    let dtype = call.dtype(0);
    let bpe = bytes_per_element(dtype)?;
    let n = numel(&x);
    let affine = call.shape(2).is_some_and(|w| !w.is_empty());
    let c = call
        .shape(2)
        .filter(|w| !w.is_empty())
        .map(|w| numel(&w))
        .unwrap_or(0);
    let (flops, elems) = if affine {
        (5 * n + 6 * c, 2 * n + 6 * c)
    } else {
        (5 * n, 2 * n)
    };
    Some(Cost {
        family: Family::Normalization,
        flops,
        bytes: Some(elems * bpe),
        dtype,
    })
}

fn broadcast(a: &[u64], b: &[u64]) -> Vec<u64> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let x = a.len().checked_sub(n - i).map_or(1, |j| a[j]);
            let y = b.len().checked_sub(n - i).map_or(1, |j| b[j]);
            x.max(y)
        })
        .collect()
}

fn binary(call: &Call) -> Option<Cost> {
    let a = call.shape(0)?;
    let b = call.shape(1).unwrap_or_default();
    let (da, db) = (call.dtype(0), call.dtype(1));
    let bpe_a = bytes_per_element(da)?;
    let bpe_b = bytes_per_element(db)?;
    let out = numel(&broadcast(&a, &b));
    let bpe_out = if b.is_empty() {
        bpe_a
    } else {
        bpe_a.max(bpe_b)
    };
    Some(Cost {
        family: Family::Elementwise,
        flops: out,
        bytes: Some(numel(&a) * bpe_a + numel(&b) * bpe_b + out * bpe_out),
        dtype: da,
    })
}

/// `copy_(self, src)`: TraceLens's sizes, elements of `self` at `self`'s dtype plus `src`'s
/// dtype, or `self`'s again when `src` is a 0-dim tensor.
fn copy(call: &Call) -> Option<Cost> {
    let src_is_tensor = call.shape(1).is_some_and(|s| !s.is_empty());
    unary(call, 0, if src_is_tensor { 1 } else { 0 })
}

fn unary(call: &Call, input: usize, output: usize) -> Option<Cost> {
    let x = call.shape(input)?;
    let din = call.dtype(input);
    let bpe_in = bytes_per_element(din)?;
    let bpe_out = bytes_per_element(call.dtype(output)).unwrap_or(bpe_in);
    let n = numel(&x);
    Some(Cost {
        family: Family::Elementwise,
        flops: n,
        bytes: Some(n * (bpe_in + bpe_out)),
        dtype: din,
    })
}

/// `dims_at`: where the reduced dims sit among the arguments (keepdim does not change the
/// count of output elements).
fn reduction(call: &Call, dims_at: usize) -> Option<Cost> {
    let x = call.shape(0)?;
    let dtype = call.dtype(0);
    let bpe = bytes_per_element(dtype)?;
    let n = numel(&x);
    let reduced: Vec<usize> = match call.concrete_ints(dims_at) {
        Some(d) if !d.is_empty() && call.dims.len() > 1 => d
            .iter()
            .filter_map(|&i| {
                let r = x.len() as i64;
                let i = if i < 0 { i + r } else { i };
                (0..r).contains(&i).then_some(i as usize)
            })
            .collect(),
        _ => (0..x.len()).collect(),
    };
    let out: u64 = x
        .iter()
        .enumerate()
        .map(|(i, &s)| if reduced.contains(&i) { 1 } else { s })
        .product();
    Some(Cost {
        family: Family::Reduction,
        flops: n,
        bytes: Some((n + out) * bpe),
        dtype,
    })
}
