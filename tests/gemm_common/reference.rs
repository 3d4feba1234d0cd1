//! References the GEMM gates compare against (inputs and digests: tests/common).

/// ||got - want||_F / ||want||_F over the elements.
pub fn rel_frobenius(got: &[f64], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len());
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (g, w) in got.iter().zip(want) {
        num += (g - w) * (g - w);
        den += w * w;
    }
    if den == 0.0 {
        num.sqrt()
    } else {
        (num / den).sqrt()
    }
}

/// The kernels' epilogue (`EpilogueArgs::apply`, epilogue.cuh) in f32, each step rounded:
/// alpha * acc, then + beta * old (only when beta != 0), then + bias.
pub fn epilogue(acc: f32, alpha: f32, beta: f32, old: f32, bias: Option<f32>) -> f32 {
    let mut v = alpha * acc;
    if beta != 0.0 {
        v += beta * old;
    }
    if let Some(b) = bias {
        v += b;
    }
    v
}

/// Element (outer, kk) of a stored operand, outer = row of op(A) or column of op(B):
/// K contiguous (`k_major`) or the outer index contiguous.
fn stored<T: Copy>(data: &[T], ld: usize, k_major: bool) -> impl Fn(usize, usize) -> T + '_ {
    move |outer, kk| {
        if k_major {
            data[outer * ld + kk]
        } else {
            data[kk * ld + outer]
        }
    }
}

/// op(A) op(B) in f64 from stored operands (row-major, leading dimensions in elements);
/// `a_k_major` / `b_k_major`: K is the contiguous dimension of stored A / B (the layout).
#[allow(clippy::too_many_arguments)]
pub fn gemm_f64(
    (a_k_major, b_k_major): (bool, bool),
    m: usize,
    n: usize,
    k: usize,
    a: &[f64],
    lda: usize,
    b: &[f64],
    ldb: usize,
) -> Vec<f64> {
    let op_a = stored(a, lda, a_k_major);
    let op_b = stored(b, ldb, b_k_major);
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for kk in 0..k {
            let av = op_a(i, kk);
            for j in 0..n {
                c[i * n + j] += av * op_b(j, kk);
            }
        }
    }
    c
}

/// The pedantic tier's exact accumulators: per output, fmaf over k ascending from +0.
#[allow(clippy::too_many_arguments)]
pub fn pedantic_f32(
    (a_k_major, b_k_major): (bool, bool),
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    lda: usize,
    b: &[f32],
    ldb: usize,
) -> Vec<f32> {
    let op_a = stored(a, lda, a_k_major);
    let op_b = stored(b, ldb, b_k_major);
    let mut c = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0.0f32;
            for kk in 0..k {
                acc = op_a(i, kk).mul_add(op_b(j, kk), acc);
            }
            c[i * n + j] = acc;
        }
    }
    c
}
