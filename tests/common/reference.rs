//! Float64 CPU references of the fused kernels (docs/kernels/fused.md), over row-major
//! tensors given as f64 values of the stored inputs. Plain loops, written from the
//! definitions, sharing nothing with the kernels' reduction orders.

/// RMSNorm of each row: y = x / sqrt(mean(x^2) + eps) * w.
pub fn rmsnorm(x: &[f64], w: &[f64], cols: usize, eps: f64) -> Vec<f64> {
    assert_eq!(w.len(), cols);
    x.chunks(cols)
        .flat_map(|row| {
            let rstd = inv_rms(row, eps);
            row.iter().zip(w).map(move |(v, wv)| v * rstd * wv)
        })
        .collect()
}

fn inv_rms(row: &[f64], eps: f64) -> f64 {
    let mean_sq = row.iter().map(|v| v * v).sum::<f64>() / row.len() as f64;
    1.0 / (mean_sq + eps).sqrt()
}

/// The fused residual add's updated residual: x + residual rounded by `round` (to the
/// storage dtype: the kernel normalizes the residual it stores).
pub fn residual_add(x: &[f64], residual: &[f64], round: impl Fn(f64) -> f64) -> Vec<f64> {
    assert_eq!(x.len(), residual.len());
    x.iter().zip(residual).map(|(a, b)| round(a + b)).collect()
}

/// Gradients of [`rmsnorm`] given dy: dx per row, dw summed over rows.
#[derive(Debug, Clone, PartialEq)]
pub struct RmsNormGrads {
    pub dx: Vec<f64>,
    /// Per row, the magnitude of dx's two terms (rstd * max |dy * w|): dx is their
    /// difference, so its rounding error scales with them, not with |dx| (which is ~0 for
    /// a row of one element).
    pub dx_term_scale: Vec<f64>,
    pub dw: Vec<f64>,
}

/// dx = rstd * dy * w - x * rstd^3 * mean(dy * w * x);  dw = sum over rows of dy * x * rstd.
pub fn rmsnorm_backward(x: &[f64], w: &[f64], dy: &[f64], cols: usize, eps: f64) -> RmsNormGrads {
    assert_eq!(w.len(), cols);
    assert_eq!(x.len(), dy.len());
    let mut dx = Vec::with_capacity(x.len());
    let mut dx_term_scale = Vec::with_capacity(x.len() / cols);
    let mut dw = vec![0.0; cols];
    for (xr, dyr) in x.chunks(cols).zip(dy.chunks(cols)) {
        let rstd = inv_rms(xr, eps);
        let dot = xr
            .iter()
            .zip(dyr)
            .zip(w)
            .map(|((xv, g), wv)| g * wv * xv)
            .sum::<f64>();
        let coef = dot * rstd.powi(3) / cols as f64;
        dx_term_scale.push(
            rstd * dyr
                .iter()
                .zip(w)
                .fold(0.0f64, |m, (g, wv)| m.max((g * wv).abs())),
        );
        for c in 0..cols {
            dx.push(rstd * dyr[c] * w[c] - coef * xr[c]);
            dw[c] += dyr[c] * xr[c] * rstd;
        }
    }
    RmsNormGrads {
        dx,
        dx_term_scale,
        dw,
    }
}

/// LayerNorm of each row: y = (x - mean) / sqrt(var + eps) * w + b, var the biased variance.
pub fn layernorm(x: &[f64], w: &[f64], b: &[f64], cols: usize, eps: f64) -> Vec<f64> {
    assert_eq!(w.len(), cols);
    assert_eq!(b.len(), cols);
    x.chunks(cols)
        .flat_map(|row| {
            let (mean, rstd) = mean_rstd(row, eps);
            row.iter()
                .zip(w.iter().zip(b))
                .map(move |(v, (wv, bv))| (v - mean) * rstd * wv + bv)
        })
        .collect()
}

/// A row's mean and 1 / sqrt(var + eps), var = mean((x - mean)^2): two passes, as the
/// kernels do (E[x^2] - mean^2 loses the variance of rows far from zero).
pub fn mean_rstd(row: &[f64], eps: f64) -> (f64, f64) {
    let n = row.len() as f64;
    let mean = row.iter().sum::<f64>() / n;
    let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, 1.0 / (var + eps).sqrt())
}

/// Gradients of [`layernorm`] given dy: dx per row, dw and db summed over rows.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerNormGrads {
    pub dx: Vec<f64>,
    /// Per row, the magnitude of dx's terms (rstd * max |dy * w|): dx is their difference,
    /// so its rounding error scales with them, not with |dx| (0 for a row of one element).
    pub dx_term_scale: Vec<f64>,
    pub dw: Vec<f64>,
    pub db: Vec<f64>,
}

/// With xhat = (x - mean) * rstd and g = dy * w:
/// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)); dw = sum over rows of dy * xhat;
/// db = sum over rows of dy.
pub fn layernorm_backward(
    x: &[f64],
    w: &[f64],
    dy: &[f64],
    cols: usize,
    eps: f64,
) -> LayerNormGrads {
    assert_eq!(w.len(), cols);
    assert_eq!(x.len(), dy.len());
    let mut grads = LayerNormGrads {
        dx: Vec::with_capacity(x.len()),
        dx_term_scale: Vec::with_capacity(x.len() / cols),
        dw: vec![0.0; cols],
        db: vec![0.0; cols],
    };
    for (xr, dyr) in x.chunks(cols).zip(dy.chunks(cols)) {
        let (mean, rstd) = mean_rstd(xr, eps);
        let xhat: Vec<f64> = xr.iter().map(|v| (v - mean) * rstd).collect();
        let g: Vec<f64> = dyr.iter().zip(w).map(|(d, wv)| d * wv).collect();
        let mean_g = g.iter().sum::<f64>() / cols as f64;
        let mean_gx = g.iter().zip(&xhat).map(|(a, b)| a * b).sum::<f64>() / cols as f64;
        grads
            .dx_term_scale
            .push(rstd * g.iter().fold(0.0f64, |m, v| m.max(v.abs())));
        for c in 0..cols {
            grads.dx.push(rstd * (g[c] - mean_g - xhat[c] * mean_gx));
            grads.dw[c] += dyr[c] * xhat[c];
            grads.db[c] += dyr[c];
        }
    }
    grads
}

/// Softmax of each row, with the max subtracted first.
pub fn softmax(x: &[f64], cols: usize) -> Vec<f64> {
    x.chunks(cols)
        .flat_map(|row| {
            let max = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let exps: Vec<f64> = row.iter().map(|v| (v - max).exp()).collect();
            let sum: f64 = exps.iter().sum();
            exps.into_iter().map(move |e| e / sum)
        })
        .collect()
}

/// dx = y * (dy - sum(y * dy)) per row.
pub fn softmax_backward(y: &[f64], dy: &[f64], cols: usize) -> Vec<f64> {
    assert_eq!(y.len(), dy.len());
    y.chunks(cols)
        .zip(dy.chunks(cols))
        .flat_map(|(yr, dyr)| {
            let dot: f64 = yr.iter().zip(dyr).map(|(a, b)| a * b).sum();
            yr.iter().zip(dyr).map(move |(a, b)| a * (b - dot))
        })
        .collect()
}

/// silu(gate) * up, silu(g) = g / (1 + exp(-g)).
pub fn swiglu(gate: &[f64], up: &[f64]) -> Vec<f64> {
    assert_eq!(gate.len(), up.len());
    gate.iter()
        .zip(up)
        .map(|(g, u)| g / (1.0 + (-g).exp()) * u)
        .collect()
}

/// The gate and up halves of an interleaved [rows, 2 * cols] tensor (each row: gate then up).
pub fn split_gate_up(gate_up: &[f64], cols: usize) -> (Vec<f64>, Vec<f64>) {
    let mut gate = Vec::with_capacity(gate_up.len() / 2);
    let mut up = Vec::with_capacity(gate_up.len() / 2);
    for row in gate_up.chunks(2 * cols) {
        gate.extend_from_slice(&row[..cols]);
        up.extend_from_slice(&row[cols..]);
    }
    (gate, up)
}

/// Which elements of a head a rotary pair joins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pairing {
    /// (x[p], x[p + head_dim / 2]): rotate halves.
    Neox,
    /// (x[2p], x[2p + 1]): interleaved pairs.
    Gptj,
}

impl Pairing {
    /// Element indices (a, b) of pair p in a head whose first `rotary_dim` elements rotate.
    pub fn pair(self, p: usize, rotary_dim: usize) -> (usize, usize) {
        match self {
            Pairing::Neox => (p, p + rotary_dim / 2),
            Pairing::Gptj => (2 * p, 2 * p + 1),
        }
    }
}

/// RoPE of x [tokens, heads, head_dim] with cos, sin [tokens, rotary_dim / 2]: the first
/// `rotary_dim` elements of each head rotate (a' = a cos - b sin, b' = b cos + a sin for each
/// pair (a, b) among them); the rest are copied.
pub fn rope(
    x: &[f64],
    cos: &[f64],
    sin: &[f64],
    heads: usize,
    head_dim: usize,
    rotary_dim: usize,
    pairing: Pairing,
) -> Vec<f64> {
    let half = rotary_dim / 2;
    assert!(rotary_dim % 2 == 0 && rotary_dim <= head_dim);
    let tokens = x.len() / (heads * head_dim);
    assert_eq!(x.len(), tokens * heads * head_dim);
    assert_eq!(cos.len(), tokens * half);
    assert_eq!(sin.len(), tokens * half);
    let mut out = x.to_vec();
    for t in 0..tokens {
        for h in 0..heads {
            let base = (t * heads + h) * head_dim;
            for p in 0..half {
                let (ia, ib) = pairing.pair(p, rotary_dim);
                let (a, b) = (x[base + ia], x[base + ib]);
                let (c, s) = (cos[t * half + p], sin[t * half + p]);
                out[base + ia] = a * c - b * s;
                out[base + ib] = b * c + a * s;
            }
        }
    }
    out
}

/// A cos/sin table [tokens, rotary_dim / 2] for positions 0.. and the usual frequencies
/// base^(-2p / rotary_dim).
pub fn rope_table(tokens: usize, rotary_dim: usize, base: f64) -> (Vec<f64>, Vec<f64>) {
    let half = rotary_dim / 2;
    let mut cos = Vec::with_capacity(tokens * half);
    let mut sin = Vec::with_capacity(tokens * half);
    for t in 0..tokens {
        for p in 0..half {
            let angle = t as f64 * base.powf(-2.0 * p as f64 / rotary_dim as f64);
            cos.push(angle.cos());
            sin.push(angle.sin());
        }
    }
    (cos, sin)
}
