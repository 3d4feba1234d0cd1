//! The fused kernels' float64 references, inputs, metric and digest helpers, checked on the
//! CPU (no GPU): hand-computed cases, identities each operation must satisfy, gradients
//! against central finite differences, and the digest file format. The GPU gates
//! (`tests/gpu_fused.rs`) trust exactly these pieces.

mod common;

use common::data::{max_row_relative_error, max_row_scaled_error, round_to, Elem, SplitMix64};
use common::digest::{fnv1a64, hash_line, DigestFile};
use common::reference::{
    layernorm, layernorm_backward, mean_rstd, residual_add, rmsnorm, rmsnorm_backward, rope,
    rope_table, softmax, softmax_backward, split_gate_up, swiglu, Pairing,
};
use half::{bf16, f16};

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + b.abs())
}

#[test]
fn rmsnorm_matches_a_hand_computed_row() {
    // mean(x^2) = (9 + 16) / 2 = 12.5, rstd = 1 / sqrt(12.5 + eps).
    let y = rmsnorm(&[3.0, 4.0, 0.0, 2.0], &[1.0, 2.0], 2, 0.0);
    let r = 1.0 / 12.5f64.sqrt();
    assert!(close(y[0], 3.0 * r, 1e-15) && close(y[1], 8.0 * r, 1e-15));
    // Second row: mean = 2, y = [0, 2 / sqrt(2) * 2].
    assert!(close(y[2], 0.0, 1e-15) && close(y[3], 2.0 / 2f64.sqrt() * 2.0, 1e-15));
    // eps enters inside the root.
    let y = rmsnorm(&[1.0], &[1.0], 1, 3.0);
    assert!(close(y[0], 0.5, 1e-15));
}

#[test]
fn residual_add_rounds_to_the_storage_type() {
    // 1 + 2^-9 is not a bf16 (8 significant bits): it rounds to 1; in f32 it stays.
    let x = [1.0, 0.25];
    let r = [2f64.powi(-9), 0.5];
    assert_eq!(residual_add(&x, &r, round_to::<bf16>), vec![1.0, 0.75]);
    assert_eq!(
        residual_add(&x, &r, round_to::<f32>),
        vec![1.0 + 2f64.powi(-9), 0.75]
    );
}

/// Central finite differences of a scalar function of one input vector.
fn numeric_gradient(f: impl Fn(&[f64]) -> f64, at: &[f64]) -> Vec<f64> {
    let h = 1e-6;
    (0..at.len())
        .map(|i| {
            let mut p = at.to_vec();
            let mut m = at.to_vec();
            p[i] += h;
            m[i] -= h;
            (f(&p) - f(&m)) / (2.0 * h)
        })
        .collect()
}

#[test]
fn rmsnorm_backward_matches_finite_differences() {
    let (rows, cols, eps) = (3, 7, 1e-5);
    let mut rng = SplitMix64::new(11);
    let x: Vec<f64> = (0..rows * cols).map(|_| rng.uniform(-2.0, 2.0)).collect();
    let w: Vec<f64> = (0..cols).map(|_| rng.uniform(0.5, 1.5)).collect();
    let dy: Vec<f64> = (0..rows * cols).map(|_| rng.uniform(-1.0, 1.0)).collect();
    // L = sum(dy * y): dL/dx and dL/dw are the backward's outputs.
    let loss = |x: &[f64], w: &[f64]| {
        rmsnorm(x, w, cols, eps)
            .iter()
            .zip(&dy)
            .map(|(y, g)| y * g)
            .sum::<f64>()
    };
    let grads = rmsnorm_backward(&x, &w, &dy, cols, eps);
    for (a, b) in grads.dx.iter().zip(numeric_gradient(|x| loss(x, &w), &x)) {
        assert!(close(*a, b, 1e-6), "dx {a} vs numeric {b}");
    }
    for (a, b) in grads.dw.iter().zip(numeric_gradient(|w| loss(&x, w), &w)) {
        assert!(close(*a, b, 1e-6), "dw {a} vs numeric {b}");
    }
}

#[test]
fn layernorm_matches_hand_computed_rows() {
    // [1, 2, 3, 4]: mean 2.5, variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25.
    let r = 1.0 / 1.25f64.sqrt();
    let (w, b) = ([1.0, 2.0, 1.0, 1.0], [0.0, 0.0, 0.5, -1.0]);
    let y = layernorm(&[1.0, 2.0, 3.0, 4.0], &w, &b, 4, 0.0);
    let want = [-1.5 * r, -0.5 * r * 2.0, 0.5 * r + 0.5, 1.5 * r - 1.0];
    for (a, b) in y.iter().zip(want) {
        assert!(close(*a, b, 1e-15), "{a} vs {b}");
    }
    // eps enters inside the root: [0, 2] has mean 1 and variance 1, so eps 3 halves it.
    let y = layernorm(&[0.0, 2.0], &[1.0, 1.0], &[0.0, 0.0], 2, 3.0);
    assert_eq!(y, vec![-0.5, 0.5]);
    // A row of one element is its bias.
    assert_eq!(layernorm(&[7.0], &[3.0], &[0.25], 1, 1e-5), vec![0.25]);
}

#[test]
fn layernorm_rows_are_standardized_and_ignore_shift_and_scale() {
    let mut rng = SplitMix64::new(21);
    let cols = 33;
    let x: Vec<f64> = (0..4 * cols).map(|_| rng.uniform(-3.0, 5.0)).collect();
    let (ones, zeros) = (vec![1.0; cols], vec![0.0; cols]);
    let moments = |row: &[f64]| {
        let mean = row.iter().sum::<f64>() / cols as f64;
        let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / cols as f64;
        (mean, var)
    };
    let y = layernorm(&x, &ones, &zeros, cols, 0.0);
    for row in y.chunks(cols) {
        let (mean, var) = moments(row);
        assert!(mean.abs() < 1e-14 && close(var, 1.0, 1e-13), "{mean} {var}");
    }
    // With eps the variance is var / (var + eps).
    let eps = 0.5;
    for (xr, yr) in x
        .chunks(cols)
        .zip(layernorm(&x, &ones, &zeros, cols, eps).chunks(cols))
    {
        let var = moments(xr).1;
        assert!(close(moments(yr).1, var / (var + eps), 1e-13));
    }
    // Shifting and scaling a row changes nothing.
    let moved: Vec<f64> = x.iter().map(|v| 3.0 * v - 40.0).collect();
    for (a, b) in layernorm(&moved, &ones, &zeros, cols, 0.0).iter().zip(&y) {
        assert!(close(*a, *b, 1e-12));
    }
}

#[test]
fn the_variance_is_taken_about_the_mean() {
    // A row far from zero: mean(x^2) - mean^2 cancels to nothing in f64, the second pass
    // over x - mean keeps the variance exactly.
    let row = [1e9, 1e9 + 1.0, 1e9 + 2.0, 1e9 + 3.0];
    let (mean, rstd) = mean_rstd(&row, 0.0);
    assert_eq!(mean, 1e9 + 1.5);
    assert_eq!(rstd, 1.0 / 1.25f64.sqrt());
    let naive = row.iter().map(|v| v * v).sum::<f64>() / 4.0 - mean * mean;
    assert!((naive - 1.25).abs() >= 1.0, "{naive}");
}

#[test]
fn layernorm_backward_matches_finite_differences() {
    let (rows, cols, eps) = (3, 7, 1e-5);
    let mut rng = SplitMix64::new(12);
    let x: Vec<f64> = (0..rows * cols).map(|_| rng.uniform(-1.0, 3.0)).collect();
    let w: Vec<f64> = (0..cols).map(|_| rng.uniform(0.5, 1.5)).collect();
    let b: Vec<f64> = (0..cols).map(|_| rng.uniform(-0.5, 0.5)).collect();
    let dy: Vec<f64> = (0..rows * cols).map(|_| rng.uniform(-1.0, 1.0)).collect();
    // L = sum(dy * y): dL/dx, dL/dw and dL/db are the backward's outputs.
    let loss = |x: &[f64], w: &[f64], b: &[f64]| {
        layernorm(x, w, b, cols, eps)
            .iter()
            .zip(&dy)
            .map(|(y, g)| y * g)
            .sum::<f64>()
    };
    let grads = layernorm_backward(&x, &w, &dy, cols, eps);
    let checks = [
        ("dx", &grads.dx, numeric_gradient(|x| loss(x, &w, &b), &x)),
        ("dw", &grads.dw, numeric_gradient(|w| loss(&x, w, &b), &w)),
        ("db", &grads.db, numeric_gradient(|b| loss(&x, &w, b), &b)),
    ];
    for (name, analytic, numeric) in checks {
        for (a, n) in analytic.iter().zip(numeric) {
            assert!(close(*a, n, 1e-6), "{name} {a} vs numeric {n}");
        }
    }
}

#[test]
fn layernorm_dx_is_orthogonal_to_shifts_and_scales() {
    // y ignores a shift of x, so each row of dx sums to 0; with eps 0 it ignores a scale too,
    // so dx . x = 0.
    let cols = 9;
    let mut rng = SplitMix64::new(13);
    let x: Vec<f64> = (0..2 * cols).map(|_| rng.uniform(-1.0, 3.0)).collect();
    let w: Vec<f64> = (0..cols).map(|_| rng.uniform(0.5, 1.5)).collect();
    let dy: Vec<f64> = (0..2 * cols).map(|_| rng.uniform(-1.0, 1.0)).collect();
    for eps in [1e-5, 0.0] {
        let g = layernorm_backward(&x, &w, &dy, cols, eps);
        for (dxr, xr) in g.dx.chunks(cols).zip(x.chunks(cols)) {
            assert!(dxr.iter().sum::<f64>().abs() < 1e-13);
            if eps == 0.0 {
                let dot: f64 = dxr.iter().zip(xr).map(|(a, b)| a * b).sum();
                assert!(dot.abs() < 1e-12, "{dot}");
            }
        }
    }
    // db is the column sum of dy, whatever x.
    let g = layernorm_backward(&x, &w, &dy, cols, 1e-5);
    for (c, db) in g.db.iter().enumerate() {
        assert!(close(*db, dy[c] + dy[cols + c], 1e-15));
    }
}

#[test]
fn softmax_rows_are_distributions_and_shift_invariant() {
    let mut rng = SplitMix64::new(5);
    let cols = 9;
    let x: Vec<f64> = (0..4 * cols).map(|_| rng.uniform(-8.0, 8.0)).collect();
    let y = softmax(&x, cols);
    for row in y.chunks(cols) {
        assert!(close(row.iter().sum::<f64>(), 1.0, 1e-14));
        assert!(row.iter().all(|&v| v > 0.0));
    }
    // Adding a constant to a row changes nothing; huge values do not overflow.
    let shifted: Vec<f64> = x.iter().map(|v| v + 700.0).collect();
    for (a, b) in softmax(&shifted, cols).iter().zip(&y) {
        assert!(close(*a, *b, 1e-12));
    }
    assert_eq!(softmax(&[0.0, 0.0], 2), vec![0.5, 0.5]);
}

#[test]
fn softmax_backward_matches_finite_differences() {
    let cols = 6;
    let mut rng = SplitMix64::new(7);
    let x: Vec<f64> = (0..2 * cols).map(|_| rng.uniform(-3.0, 3.0)).collect();
    let dy: Vec<f64> = (0..2 * cols).map(|_| rng.uniform(-1.0, 1.0)).collect();
    let loss = |x: &[f64]| {
        softmax(x, cols)
            .iter()
            .zip(&dy)
            .map(|(y, g)| y * g)
            .sum::<f64>()
    };
    let dx = softmax_backward(&softmax(&x, cols), &dy, cols);
    for (a, b) in dx.iter().zip(numeric_gradient(loss, &x)) {
        assert!(close(*a, b, 1e-7), "dx {a} vs numeric {b}");
    }
}

#[test]
fn swiglu_matches_its_definition() {
    let y = swiglu(&[0.0, 1.0, -1.0, 30.0, -800.0], &[5.0, 2.0, 2.0, 1.0, 1.0]);
    let sig1 = 1.0 / (1.0 + (-1.0f64).exp());
    assert_eq!(y[0], 0.0);
    assert!(close(y[1], 2.0 * sig1, 1e-15));
    assert!(close(y[2], -2.0 * (1.0 - sig1), 1e-15));
    assert!(close(y[3], 30.0, 1e-12));
    assert!(
        y[4].abs() < 1e-300,
        "silu of a very negative gate is 0, not NaN: {}",
        y[4]
    );
    let (g, u) = split_gate_up(&[1.0, 2.0, 10.0, 20.0, 3.0, 4.0, 30.0, 40.0], 2);
    assert_eq!(
        (g, u),
        (vec![1.0, 2.0, 3.0, 4.0], vec![10.0, 20.0, 30.0, 40.0])
    );
}

#[test]
fn rope_rotates_pairs_and_keeps_their_norms() {
    let (tokens, heads, head_dim) = (5, 3, 8);
    let mut rng = SplitMix64::new(3);
    let x: Vec<f64> = (0..tokens * heads * head_dim)
        .map(|_| rng.uniform(-1.0, 1.0))
        .collect();
    let (cos, sin) = rope_table(tokens, head_dim, 10000.0);
    for pairing in [Pairing::Neox, Pairing::Gptj] {
        let y = rope(&x, &cos, &sin, heads, head_dim, head_dim, pairing);
        for t in 0..tokens {
            for h in 0..heads {
                let base = (t * heads + h) * head_dim;
                for p in 0..head_dim / 2 {
                    let (a, b) = pairing.pair(p, head_dim);
                    let before = x[base + a].hypot(x[base + b]);
                    let after = y[base + a].hypot(y[base + b]);
                    assert!(close(before, after, 1e-14));
                }
            }
        }
        // Position 0 has angle 0: the identity.
        assert_eq!(&y[..heads * head_dim], &x[..heads * head_dim]);
    }
    // The two pairings are one permutation apart: GPT-J on x equals NeoX on x with each
    // head's elements regrouped (evens first, then odds), regrouped back.
    let regroup = |v: &[f64]| -> Vec<f64> {
        v.chunks(head_dim)
            .flat_map(|hd| {
                hd.iter()
                    .step_by(2)
                    .chain(hd.iter().skip(1).step_by(2))
                    .cloned()
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let neox_of_regrouped = rope(
        &regroup(&x),
        &cos,
        &sin,
        heads,
        head_dim,
        head_dim,
        Pairing::Neox,
    );
    let gptj = rope(&x, &cos, &sin, heads, head_dim, head_dim, Pairing::Gptj);
    assert_eq!(regroup(&gptj), neox_of_regrouped);
}

#[test]
fn partial_rope_rotates_the_leading_elements_as_a_head_of_rotary_dim() {
    let (tokens, heads, head_dim, rotary) = (4, 3, 12, 8);
    let mut rng = SplitMix64::new(5);
    let x: Vec<f64> = (0..tokens * heads * head_dim)
        .map(|_| rng.uniform(-1.0, 1.0))
        .collect();
    let (cos, sin) = rope_table(tokens, rotary, 10000.0);
    for pairing in [Pairing::Neox, Pairing::Gptj] {
        let y = rope(&x, &cos, &sin, heads, head_dim, rotary, pairing);
        // The leading part of every head is the full RoPE of those elements alone.
        let lead: Vec<f64> = x
            .chunks(head_dim)
            .flat_map(|h| h[..rotary].to_vec())
            .collect();
        let want = rope(&lead, &cos, &sin, heads, rotary, rotary, pairing);
        for (h, (got, want)) in y.chunks(head_dim).zip(want.chunks(rotary)).enumerate() {
            assert_eq!(&got[..rotary], want, "head {h}");
            let rest = &x[h * head_dim + rotary..(h + 1) * head_dim];
            assert_eq!(&got[rotary..], rest, "head {h}: past rotary_dim untouched");
        }
    }
}

#[test]
fn rope_matches_a_hand_computed_quarter_turn() {
    // One token, one head of 2: angle pi/2 maps (a, b) to (-b, a).
    let y = rope(&[1.0, 2.0], &[0.0], &[1.0], 1, 2, 2, Pairing::Neox);
    assert_eq!(y, vec![-2.0, 1.0]);
}

#[test]
fn splitmix64_matches_the_published_sequence() {
    let mut r = SplitMix64::new(0);
    assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
    assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    assert_eq!(r.next_u64(), 0x06c4_5d18_8009_454f);
    let mut a = SplitMix64::new(42);
    let v: Vec<bf16> = a.fill(1000, -1.0, 1.0);
    assert!(v.iter().all(|x| x.to_f32().abs() <= 1.0));
    assert_eq!(
        v,
        SplitMix64::new(42).fill::<bf16>(1000, -1.0, 1.0),
        "same seed, same inputs"
    );
    assert_ne!(v, SplitMix64::new(43).fill::<bf16>(1000, -1.0, 1.0));
}

#[test]
fn fnv1a64_matches_the_reference_vectors() {
    assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
}

#[test]
fn elem_bytes_poison_and_rounding() {
    assert_eq!(bf16::bytes(&[bf16::from_f32(1.0)]), vec![0x80, 0x3f]);
    assert_eq!(f16::bytes(&[f16::from_f32(1.0)]), vec![0x00, 0x3c]);
    assert_eq!(<f32 as Elem>::bytes(&[1.0f32]), vec![0, 0, 0x80, 0x3f]);
    assert!(bf16::poison().to_f64().is_nan() && bf16::poison().is_poison());
    assert!(f16::poison().to_f64().is_nan() && f16::poison().is_poison());
    assert!(<f32 as Elem>::poison().is_nan() && <f32 as Elem>::poison().is_poison());
    assert_eq!(round_to::<f16>(1.0 + 2f64.powi(-12)), 1.0);
    assert_eq!(round_to::<f32>(0.1), 0.1f32 as f64);
}

#[test]
fn the_metric_scales_by_the_row_and_flags_nan() {
    let want = [1.0, -4.0, 0.001, 0.002];
    let got = [1.0, -4.004, 0.001, 0.0021];
    let (err, at) = max_row_relative_error(&got, &want, 2);
    // Row 0: 0.004 / 4 = 1e-3; row 1: 1e-4 / 0.002 = 5e-2 (a small row is judged by its own scale).
    assert!(close(err, 0.05, 1e-9) && at == (1, 1), "{err} at {at:?}");
    let (err, at) = max_row_relative_error(&[1.0, f64::NAN], &[1.0, 2.0], 2);
    assert!(err.is_infinite() && at == (0, 1));
    let (err, _) = max_row_relative_error(&[0.0, 1e-9], &[0.0, 0.0], 2);
    assert_eq!(err, 1e-9, "an all-zero row is measured absolutely");
}

#[test]
fn tolerances_separate_rounding_from_bugs() {
    // Rounding a row to the storage type stays inside the tolerance...
    fn rounding_error<T: Elem>() -> f64 {
        let mut rng = SplitMix64::new(9);
        let want: Vec<f64> = (0..4096).map(|_| rng.uniform(-3.0, 3.0)).collect();
        let got: Vec<f64> = want.iter().map(|&v| round_to::<T>(v)).collect();
        max_row_relative_error(&got, &want, 4096).0
    }
    assert!(rounding_error::<bf16>() < bf16::TOLERANCE / 2.0);
    assert!(rounding_error::<f16>() < f16::TOLERANCE / 2.0);
    assert!(rounding_error::<f32>() < f32::TOLERANCE / 100.0);
    // ...and the typical bugs do not: two swapped columns, one row's scale applied to another.
    let mut rng = SplitMix64::new(10);
    let x: Vec<f64> = (0..2 * 64).map(|_| rng.uniform(-1.0, 1.0)).collect();
    let w = vec![1.0; 64];
    let want = rmsnorm(&x, &w, 64, 1e-6);
    let mut swapped = want.clone();
    swapped.swap(3, 4);
    assert!(max_row_relative_error(&swapped, &want, 64).0 > bf16::TOLERANCE);
    let mut x_other_scale = x.clone();
    x_other_scale[..64].copy_from_slice(&x[64..]);
    let wrong_row = rmsnorm(&x_other_scale, &w, 64, 1e-6);
    assert!(max_row_relative_error(&wrong_row, &want, 64).0 > bf16::TOLERANCE);
    // ...nor a LayerNorm that forgets the mean, or the bias.
    let shifted: Vec<f64> = x.iter().map(|v| v + 1.0).collect();
    let b = vec![0.1; 64];
    let want = layernorm(&shifted, &w, &b, 64, 1e-5);
    let no_mean: Vec<f64> = rmsnorm(&shifted, &w, 64, 1e-5)
        .iter()
        .map(|v| v + 0.1)
        .collect();
    assert!(max_row_relative_error(&no_mean, &want, 64).0 > bf16::TOLERANCE);
    let no_bias = layernorm(&shifted, &w, &vec![0.0; 64], 64, 1e-5);
    assert!(max_row_relative_error(&no_bias, &want, 64).0 > bf16::TOLERANCE);
}

#[test]
fn digest_files_parse_check_and_fail_loudly() {
    let text =
        "# fused\n\nHASH rmsnorm_fwd_bf16@sm_90:4x7 00000000deadbeef\nHASH b 0123456789abcdef\n";
    let file = DigestFile::parse(text).unwrap();
    assert_eq!(file.entries.len(), 2);
    assert!(file.check("b", 0x0123_4567_89ab_cdef, "f.txt").is_ok());
    let differs = file.check("b", 1, "f.txt").unwrap_err();
    assert!(differs.contains("changed"), "{differs}");
    let missing = file.check("absent", 0xabc, "f.txt").unwrap_err();
    assert!(
        missing.contains("NO DIGEST RECORDED") && missing.contains("HASH absent 0000000000000abc"),
        "{missing}"
    );
    assert_eq!(hash_line("k", 255), "HASH k 00000000000000ff");
    for bad in [
        "HASH a",
        "HSH a 0123456789abcdef",
        "HASH a 0123",
        "HASH a 0123456789abcdeg",
        "HASH a 1 2",
    ] {
        assert!(DigestFile::parse(bad).is_err(), "{bad} should not parse");
    }
    let twice = "HASH a 0123456789abcdef\nHASH a 0123456789abcdef\n";
    assert!(DigestFile::parse(twice).unwrap_err().contains("twice"));
}

#[test]
fn the_recorded_digest_file_parses() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/digests/fused.txt");
    let file = DigestFile::load(&path).unwrap_or_else(|e| panic!("{e}"));
    for key in file.entries.keys() {
        assert!(
            key.contains('@') && key.contains(':'),
            "key `{key}` is not `<entry point>@<arch>:<shape>`"
        );
    }
}

/// The row split of `cuda/include/cubins/rows.cuh` (`RowPlan`), modelled on the host: for
/// every row length, anchor misalignment, thread count and tile size the kernels use, the
/// body chunks and the edge columns cover each column exactly once, every body chunk starts
/// on a 16-byte boundary, and no edge needs more threads than a row has.
#[test]
fn the_row_split_covers_every_column_once() {
    for vec in [4usize, 8] {
        for misalign in 0..vec {
            for cols in 1..=300usize {
                for threads in [16usize, 32, 64, 96] {
                    for per_thread in [1usize, 2, 4, 8] {
                        let head = ((vec - misalign) % vec).min(cols);
                        let body_chunks = (cols - head) / vec;
                        let tail_start = head + body_chunks * vec;
                        let edges = head + (cols - tail_start);
                        assert!(
                            edges <= threads,
                            "{edges} edge columns for {threads} threads"
                        );
                        let mut seen = vec![0u32; cols];
                        let per_tile = threads * per_thread;
                        let tiles = body_chunks.div_ceil(per_tile);
                        for t in 0..tiles {
                            for k in 0..per_thread {
                                for lane in 0..threads {
                                    let m = (t * per_thread + k) * threads + lane;
                                    if m >= body_chunks {
                                        continue;
                                    }
                                    let c0 = head + m * vec;
                                    assert_eq!(
                                        (misalign + c0) % vec,
                                        0,
                                        "chunk {m} is not 16-byte aligned"
                                    );
                                    for s in &mut seen[c0..c0 + vec] {
                                        *s += 1;
                                    }
                                }
                            }
                        }
                        for lane in 0..threads {
                            if lane < edges {
                                let c = if lane < head {
                                    lane
                                } else {
                                    tail_start + (lane - head)
                                };
                                seen[c] += 1;
                            }
                        }
                        assert!(
                            seen.iter().all(|&n| n == 1),
                            "vec {vec} misalign {misalign} cols {cols} threads {threads}: coverage {seen:?}"
                        );
                    }
                }
            }
        }
    }
}

/// The cluster forward's split of a row (`ClusterRow::part` in
/// `cuda/include/cubins/row_split.cuh`: `RowPlan::segment(rank, ceil(body chunks / 8))`),
/// modelled on the host: the 8 ranks' runs of body chunks and rank 0's edge columns cover
/// each column exactly once, runs are consecutive, and no run is longer than its share.
#[test]
fn the_cluster_split_covers_every_column_once() {
    const CTAS: usize = 8;
    let lengths = (1..=700usize).chain([4096, 4103, 20001, 32768, 65536]);
    for vec in [4usize, 8] {
        for misalign in 0..vec {
            for cols in lengths.clone() {
                let head = ((vec - misalign) % vec).min(cols);
                let body_chunks = (cols - head) / vec;
                let tail_start = head + body_chunks * vec;
                let seg = body_chunks.div_ceil(CTAS);
                let mut seen = vec![0u32; cols];
                let mut next_chunk = 0;
                for rank in 0..CTAS {
                    // RowPlan::segment: chunks [first, first + run), edges with segment 0.
                    let first = (rank * seg).min(body_chunks);
                    let run = seg.min(body_chunks - first);
                    assert_eq!(first, next_chunk, "runs are consecutive");
                    next_chunk = first + run;
                    for m in first..first + run {
                        for s in &mut seen[head + m * vec..head + (m + 1) * vec] {
                            *s += 1;
                        }
                    }
                    if rank == 0 {
                        for c in (0..head).chain(tail_start..cols) {
                            seen[c] += 1;
                        }
                    }
                }
                assert!(
                    seen.iter().all(|&n| n == 1),
                    "vec {vec} misalign {misalign} cols {cols}: coverage {seen:?}"
                );
            }
        }
    }
}

#[test]
fn rmsnorm_dx_of_a_one_element_row_is_judged_against_its_terms() {
    // x / rms(x) is +-1 for a single element, so dx is a cancellation of two terms of size
    // rstd * |dy * w| down to ~eps: rounding in those terms, not |dx|, sets the yardstick.
    let g = rmsnorm_backward(&[0.7], &[1.2], &[-0.4], 1, 1e-6);
    assert!(g.dx[0].abs() < 1e-5 * g.dx_term_scale[0]);
    let rounded = [g.dx[0] + 3e-3 * g.dx_term_scale[0]];
    assert!(max_row_scaled_error(&rounded, &g.dx, 1, Some(&g.dx_term_scale)).0 <= bf16::TOLERANCE);
    assert!(max_row_relative_error(&rounded, &g.dx, 1).0 > bf16::TOLERANCE);
    let wrong = [g.dx[0] + 0.1 * g.dx_term_scale[0]];
    assert!(max_row_scaled_error(&wrong, &g.dx, 1, Some(&g.dx_term_scale)).0 > bf16::TOLERANCE);
}
