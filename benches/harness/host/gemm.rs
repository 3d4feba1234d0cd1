//! Row-major GEMM shapes as cuBLAS (column-major) arguments. A row-major matrix is its
//! transpose in column-major order, so row-major `C = op(A) op(B)` is computed as
//! column-major `C^T = op(B)^T op(A)^T`: operands swapped, dimensions M and N swapped.

use serde::Serialize;
use std::fmt;

/// `C[M,N] = op(A) op(B)`, every matrix row-major. `trans_a`: A is stored as [K,M].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RowMajorGemm {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub trans_a: bool,
    pub trans_b: bool,
    /// Elements past each stored row of A, B and C before the next one: each leading
    /// dimension is its row length plus its pad (0: tight).
    pub pad: [usize; 3],
}

/// `cublasOperation_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    N = 0,
    T = 1,
}

/// The arguments of `cublasGemmEx(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb,
/// beta, C, ldc)` where cuBLAS's "A" is our B and cuBLAS's "B" is our A.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CublasArgs {
    pub transa: Op,
    pub transb: Op,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// Leading dimension of our B (passed as cuBLAS's first operand).
    pub ld_first: usize,
    /// Leading dimension of our A (passed as cuBLAS's second operand).
    pub ld_second: usize,
    pub ldc: usize,
}

impl RowMajorGemm {
    pub fn new(m: usize, n: usize, k: usize) -> RowMajorGemm {
        RowMajorGemm {
            m,
            n,
            k,
            trans_a: false,
            trans_b: false,
            pad: [0; 3],
        }
    }

    /// Leading dimension of stored A: `[M][K]`, or `[K][M]` transposed.
    pub fn lda(&self) -> usize {
        (if self.trans_a { self.m } else { self.k }) + self.pad[0]
    }

    /// Leading dimension of stored B: `[K][N]`, or `[N][K]` transposed.
    pub fn ldb(&self) -> usize {
        (if self.trans_b { self.k } else { self.n }) + self.pad[1]
    }

    pub fn ldc(&self) -> usize {
        self.n + self.pad[2]
    }

    pub fn flops(&self) -> u64 {
        2 * self.m as u64 * self.n as u64 * self.k as u64
    }

    /// Elements of stored A, B and C (their rows `ld` apart).
    pub fn elements(&self) -> (usize, usize, usize) {
        let rows_a = if self.trans_a { self.k } else { self.m };
        let rows_b = if self.trans_b { self.n } else { self.k };
        (
            rows_a * self.lda(),
            rows_b * self.ldb(),
            self.m * self.ldc(),
        )
    }

    /// `NN`, `TN`, `NT`, `TT`: op(A) then op(B).
    pub fn layout(&self) -> &'static str {
        match (self.trans_a, self.trans_b) {
            (false, false) => "NN",
            (true, false) => "TN",
            (false, true) => "NT",
            (true, true) => "TT",
        }
    }

    pub fn cublas_args(&self) -> CublasArgs {
        CublasArgs {
            transa: if self.trans_b { Op::T } else { Op::N },
            transb: if self.trans_a { Op::T } else { Op::N },
            m: self.n,
            n: self.m,
            k: self.k,
            ld_first: self.ldb(),
            ld_second: self.lda(),
            ldc: self.ldc(),
        }
    }

    /// Every dimension fits cuBLAS's `int` arguments and none is zero.
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [("M", self.m), ("N", self.n), ("K", self.k)] {
            if v == 0 || v > i32::MAX as usize {
                return Err(format!("GEMM {name}={v} is outside 1..=i32::MAX"));
            }
        }
        Ok(())
    }
}

impl fmt::Display for RowMajorGemm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "M={} N={} K={} {}",
            self.m,
            self.n,
            self.k,
            self.layout()
        )?;
        if self.pad != [0; 3] {
            write!(
                f,
                " lda={} ldb={} ldc={}",
                self.lda(),
                self.ldb(),
                self.ldc()
            )?;
        }
        Ok(())
    }
}

/// `cudaDataType_t` of a GEMM operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum DataType {
    F32,
    F16,
    Bf16,
}

impl DataType {
    /// The `cudaDataType_t` value (`CUDA_R_32F` = 0, `CUDA_R_16F` = 2, `CUDA_R_16BF` = 14).
    pub fn cuda_value(self) -> i32 {
        match self {
            DataType::F32 => 0,
            DataType::F16 => 2,
            DataType::Bf16 => 14,
        }
    }

    pub fn size_bytes(self) -> usize {
        match self {
            DataType::F32 => 4,
            DataType::F16 | DataType::Bf16 => 2,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DataType::F32 => "fp32",
            DataType::F16 => "fp16",
            DataType::Bf16 => "bf16",
        }
    }
}

/// `cublasComputeType_t` values the comparators use (all accumulate in fp32).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ComputeType {
    Compute32F,
    Compute32FPedantic,
    Compute32FFastTf32,
}

impl ComputeType {
    pub fn cublas_value(self) -> i32 {
        match self {
            ComputeType::Compute32F => 68,
            ComputeType::Compute32FPedantic => 69,
            ComputeType::Compute32FFastTf32 => 77,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ComputeType::Compute32F => "CUBLAS_COMPUTE_32F",
            ComputeType::Compute32FPedantic => "CUBLAS_COMPUTE_32F_PEDANTIC",
            ComputeType::Compute32FFastTf32 => "CUBLAS_COMPUTE_32F_FAST_TF32",
        }
    }
}

/// `cublasMath_t` set on the handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum MathMode {
    Default,
    Pedantic,
}

impl MathMode {
    /// `CUBLAS_DEFAULT_MATH` = 0, `CUBLAS_PEDANTIC_MATH` = 2.
    pub fn cublas_value(self) -> i32 {
        match self {
            MathMode::Default => 0,
            MathMode::Pedantic => 2,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            MathMode::Default => "default math",
            MathMode::Pedantic => "pedantic math",
        }
    }
}

/// The types of one GEMM as the comparator runs it: what its literal name says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct GemmTypes {
    /// A and B.
    pub input: DataType,
    pub output: DataType,
    pub compute: ComputeType,
    pub math: MathMode,
}

impl GemmTypes {
    pub const BF16: GemmTypes = GemmTypes {
        input: DataType::Bf16,
        output: DataType::Bf16,
        compute: ComputeType::Compute32F,
        math: MathMode::Default,
    };
    pub const FP16: GemmTypes = GemmTypes {
        input: DataType::F16,
        output: DataType::F16,
        compute: ComputeType::Compute32F,
        math: MathMode::Default,
    };
    /// fp32 storage on TF32 tensor cores.
    pub const TF32: GemmTypes = GemmTypes {
        input: DataType::F32,
        output: DataType::F32,
        compute: ComputeType::Compute32FFastTf32,
        math: MathMode::Default,
    };
    /// Plain fp32 FMA, no reduced-precision shortcuts.
    pub const FP32_PEDANTIC: GemmTypes = GemmTypes {
        input: DataType::F32,
        output: DataType::F32,
        compute: ComputeType::Compute32FPedantic,
        math: MathMode::Pedantic,
    };

    /// The comparator's literal name: `cuBLAS bf16 in, bf16 out, CUBLAS_COMPUTE_32F, default math`.
    pub fn comparator_name(&self) -> String {
        format!(
            "cuBLAS {} in, {} out, {}, {}",
            self.input.name(),
            self.output.name(),
            self.compute.name(),
            self.math.name()
        )
    }
}

/// Random operand bytes of `n` elements of `dtype`, values uniform in [-1, 1).
pub fn random_bytes(dtype: DataType, n: usize, seed: u64) -> Vec<u8> {
    match dtype {
        DataType::F32 => super::random::f32s(n, seed)
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
        DataType::F16 => super::random::f16s(n, seed)
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
        DataType::Bf16 => super::random::bf16s(n, seed)
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
    }
}

/// Element `i` of a little-endian buffer of `dtype`.
pub fn decode(dtype: DataType, bytes: &[u8], i: usize) -> f64 {
    let at = |w: usize| &bytes[i * w..i * w + w];
    match dtype {
        DataType::F32 => f64::from(f32::from_le_bytes(at(4).try_into().expect("4 bytes"))),
        DataType::F16 => half::f16::from_le_bytes(at(2).try_into().expect("2 bytes")).to_f64(),
        DataType::Bf16 => half::bf16::from_le_bytes(at(2).try_into().expect("2 bytes")).to_f64(),
    }
}

impl DataType {
    /// Relative rounding step of the type (2^-mantissa bits).
    pub fn epsilon(self) -> f64 {
        match self {
            DataType::F32 => f64::from(f32::EPSILON),
            DataType::F16 => 2f64.powi(-10),
            DataType::Bf16 => 2f64.powi(-7),
        }
    }
}

/// Checks output entries `C[i,j]` of a row-major GEMM against a float64 reference.
///
/// The bound separates a wrong product from rounding. With `rss` the root sum of squares of
/// the K products (the scale of the partial sums): two output rounding steps of the value
/// and of `rss` (a split-K reduction may round partial sums to the output type), plus
/// 2^-10 of `rss` (TF32's input rounding, summed as random errors). A wrong layout or an
/// unwritten entry misses it by the value's own magnitude, about sqrt(K)/3 for inputs in
/// [-1, 1), against a bound of a few percent of it in bf16.
pub fn check_entries(
    shape: &RowMajorGemm,
    types: &GemmTypes,
    a: &[u8],
    b: &[u8],
    c: &[u8],
    entries: &[(usize, usize)],
) -> Result<(), String> {
    let (m, n, k) = (shape.m, shape.n, shape.k);
    let (lda, ldb, ldc) = (shape.lda(), shape.ldb(), shape.ldc());
    for &(i, j) in entries {
        if i >= m || j >= n {
            return Err(format!("entry ({i},{j}) is outside {m}x{n}"));
        }
        let a_at = |p: usize| {
            decode(
                types.input,
                a,
                if shape.trans_a {
                    p * lda + i
                } else {
                    i * lda + p
                },
            )
        };
        let b_at = |p: usize| {
            decode(
                types.input,
                b,
                if shape.trans_b {
                    j * ldb + p
                } else {
                    p * ldb + j
                },
            )
        };
        let (mut want, mut sq) = (0.0f64, 0.0f64);
        for p in 0..k {
            let prod = a_at(p) * b_at(p);
            want += prod;
            sq += prod * prod;
        }
        let got = decode(types.output, c, i * ldc + j);
        let rss = sq.sqrt();
        let tol = 2.0 * types.output.epsilon() * (want.abs() + rss) + rss * 2f64.powi(-10);
        if !got.is_finite() || (got - want).abs() > tol {
            return Err(format!(
                "C[{i},{j}] = {got}, float64 reference {want} (tolerance {tol:.3e})"
            ));
        }
    }
    Ok(())
}

/// Entries worth checking: the four corners and `extra` pseudo-random ones.
pub fn sample_entries(shape: &RowMajorGemm, extra: usize, seed: u64) -> Vec<(usize, usize)> {
    let (m, n) = (shape.m, shape.n);
    let mut v = vec![(0, 0), (0, n - 1), (m - 1, 0), (m - 1, n - 1)];
    let mut rng = super::random::SplitMix64::new(seed);
    v.extend((0..extra).map(|_| {
        (
            (rng.next_u64() % m as u64) as usize,
            (rng.next_u64() % n as u64) as usize,
        )
    }));
    v
}

/// A seeded random set of shapes that calibrates the GEMM selector: M, N and K log-uniform
/// in 1..=16384, the layouts in turn (NN, TN, NT), and every fourth shape with odd leading
/// dimensions (each row length plus 1 to 7 elements), so that no row after the first is
/// 16-byte aligned in 16-bit storage. Shapes past `max_flops` or with an operand past
/// `max_elements` are drawn again, which keeps a sweep's memory and time bounded.
pub fn sweep_shapes(
    count: usize,
    seed: u64,
    max_flops: u64,
    max_elements: usize,
) -> Vec<RowMajorGemm> {
    let mut rng = super::random::SplitMix64::new(seed);
    let mut dim = move || {
        // log2 uniform in [0, 14]: 1 ..= 16384
        let e = (rng.next_u64() % 14_001) as f64 / 1000.0;
        (2f64.powf(e).round() as usize).clamp(1, 16384)
    };
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let i = out.len();
        let (m, n, k) = (dim(), dim(), dim());
        let mut g = RowMajorGemm {
            m,
            n,
            k,
            trans_a: i % 3 == 1,
            trans_b: i % 3 == 2,
            pad: [0; 3],
        };
        if i % 4 == 3 {
            let rows = [g.lda(), g.ldb(), g.ldc()];
            let step = 1 + 2 * (i / 4 % 3); // 1, 3 or 5, plus one where the row is odd
            g.pad = rows.map(|r| step + r % 2);
        }
        let (na, nb, nc) = g.elements();
        if g.flops() <= max_flops && na.max(nb).max(nc) <= max_elements {
            out.push(g);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::random::f32s;
    use super::*;

    /// cuBLAS semantics on the host: column-major, `C = op(X) op(Y)`.
    fn column_major_gemm(a: &CublasArgs, x: &[f32], y: &[f32]) -> Vec<f32> {
        let at = |buf: &[f32], op: Op, ld: usize, r: usize, c: usize| match op {
            Op::N => buf[r + c * ld],
            Op::T => buf[c + r * ld],
        };
        let mut out = vec![0.0; a.ldc * a.n];
        for j in 0..a.n {
            for i in 0..a.m {
                out[i + j * a.ldc] = (0..a.k)
                    .map(|p| at(x, a.transa, a.ld_first, i, p) * at(y, a.transb, a.ld_second, p, j))
                    .sum();
            }
        }
        out
    }

    #[test]
    fn cublas_arguments_reproduce_row_major_products_in_every_layout() {
        let (m, n, k) = (3, 5, 4);
        for (trans_a, trans_b, pad) in [
            (false, false, 0),
            (true, false, 0),
            (false, true, 0),
            (true, true, 0),
            (false, false, 3),
            (true, false, 1),
            (false, true, 7),
        ] {
            let g = RowMajorGemm {
                m,
                n,
                k,
                trans_a,
                trans_b,
                pad: [pad, pad + 1, pad + 2],
            };
            let (na, nb, _) = g.elements();
            let a = f32s(na, 1);
            let b = f32s(nb, 2);
            let (lda, ldb, ldc) = (g.lda(), g.ldb(), g.ldc());
            // Row-major element accessors of op(A) [M,K] and op(B) [K,N].
            let op_a = |i: usize, p: usize| {
                if trans_a {
                    a[p * lda + i]
                } else {
                    a[i * lda + p]
                }
            };
            let op_b = |p: usize, j: usize| {
                if trans_b {
                    b[j * ldb + p]
                } else {
                    b[p * ldb + j]
                }
            };
            let got = column_major_gemm(&g.cublas_args(), &b, &a);
            for i in 0..m {
                for j in 0..n {
                    let want: f32 = (0..k).map(|p| op_a(i, p) * op_b(p, j)).sum();
                    assert!(
                        (got[i * ldc + j] - want).abs() < 1e-5,
                        "{} C[{i},{j}]: {} vs {want}",
                        g.layout(),
                        got[i * n + j]
                    );
                }
            }
        }
    }

    #[test]
    fn flops_layout_and_validation() {
        let g = RowMajorGemm::new(8192, 8192, 8192);
        assert_eq!(g.flops(), 1_099_511_627_776);
        assert_eq!(g.to_string(), "M=8192 N=8192 K=8192 NN");
        assert!(g.validate().is_ok());
        assert!(RowMajorGemm::new(0, 1, 1)
            .validate()
            .unwrap_err()
            .contains("M=0"));
        assert!(RowMajorGemm::new(1, 1, 1 << 31).validate().is_err());
    }

    #[test]
    fn comparators_are_named_literally() {
        assert_eq!(
            GemmTypes::BF16.comparator_name(),
            "cuBLAS bf16 in, bf16 out, CUBLAS_COMPUTE_32F, default math"
        );
        assert_eq!(
            GemmTypes::TF32.comparator_name(),
            "cuBLAS fp32 in, fp32 out, CUBLAS_COMPUTE_32F_FAST_TF32, default math"
        );
        assert_eq!(
            GemmTypes::FP32_PEDANTIC.comparator_name(),
            "cuBLAS fp32 in, fp32 out, CUBLAS_COMPUTE_32F_PEDANTIC, pedantic math"
        );
    }

    #[test]
    fn enum_values_match_the_cuda_headers() {
        assert_eq!(
            [DataType::F32, DataType::F16, DataType::Bf16].map(DataType::cuda_value),
            [0, 2, 14]
        );
        assert_eq!(
            [
                ComputeType::Compute32F,
                ComputeType::Compute32FPedantic,
                ComputeType::Compute32FFastTf32
            ]
            .map(ComputeType::cublas_value),
            [68, 69, 77]
        );
        assert_eq!(
            [MathMode::Default, MathMode::Pedantic].map(MathMode::cublas_value),
            [0, 2]
        );
    }

    /// Row-major host GEMM into `types.output` bytes.
    fn host_gemm(g: &RowMajorGemm, types: &GemmTypes, a: &[u8], b: &[u8]) -> Vec<u8> {
        let mut c = Vec::new();
        let (lda, ldb) = (g.lda(), g.ldb());
        for i in 0..g.m {
            for j in 0..g.ldc() {
                let v: f64 = if j >= g.n {
                    0.0
                } else {
                    (0..g.k)
                        .map(|p| {
                            let ai = if g.trans_a { p * lda + i } else { i * lda + p };
                            let bi = if g.trans_b { j * ldb + p } else { p * ldb + j };
                            decode(types.input, a, ai) * decode(types.input, b, bi)
                        })
                        .sum()
                };
                match types.output {
                    DataType::F32 => c.extend((v as f32).to_le_bytes()),
                    DataType::F16 => c.extend(half::f16::from_f64(v).to_le_bytes()),
                    DataType::Bf16 => c.extend(half::bf16::from_f64(v).to_le_bytes()),
                }
            }
        }
        c
    }

    #[test]
    fn a_right_product_passes_and_a_transposed_or_poisoned_one_fails() {
        for (types, pad) in [
            (GemmTypes::BF16, 0),
            (GemmTypes::FP16, 0),
            (GemmTypes::TF32, 0),
            (GemmTypes::BF16, 3),
        ] {
            let g = RowMajorGemm {
                m: 6,
                n: 5,
                k: 256,
                trans_a: true,
                trans_b: false,
                pad: [pad; 3],
            };
            let (na, nb, _) = g.elements();
            let a = random_bytes(types.input, na, 11);
            let b = random_bytes(types.input, nb, 12);
            let c = host_gemm(&g, &types, &a, &b);
            let all: Vec<(usize, usize)> = (0..g.m)
                .flat_map(|i| (0..g.n).map(move |j| (i, j)))
                .collect();
            assert_eq!(
                check_entries(&g, &types, &a, &b, &c, &all),
                Ok(()),
                "{}",
                types.comparator_name()
            );

            let wrong_layout = RowMajorGemm {
                trans_a: false,
                ..g
            };
            let c_wrong = host_gemm(&wrong_layout, &types, &a, &b);
            assert!(check_entries(&g, &types, &a, &b, &c_wrong, &all).is_err());

            let poisoned = vec![0xFF; c.len()];
            let e = check_entries(&g, &types, &a, &b, &poisoned, &[(0, 0)]).unwrap_err();
            assert!(e.contains("C[0,0] = NaN"), "{e}");
        }
    }

    #[test]
    fn sampled_entries_are_in_range_and_include_the_corners() {
        let g = RowMajorGemm::new(1, 4096, 4096);
        let s = sample_entries(&g, 12, 5);
        assert_eq!(s.len(), 16);
        assert!(s.contains(&(0, 4095)));
        assert!(s.iter().all(|&(i, j)| i < 1 && j < 4096));
    }

    #[test]
    fn the_sweep_is_seeded_bounded_and_covers_every_layout_and_odd_leading_dimensions() {
        let (flops, elems) = (1u64 << 41, 1usize << 27);
        let v = sweep_shapes(48, 0x5EED, flops, elems);
        assert_eq!(v, sweep_shapes(48, 0x5EED, flops, elems), "seeded");
        assert_ne!(v, sweep_shapes(48, 0x5EEE, flops, elems));
        assert_eq!(v.len(), 48);
        for g in &v {
            assert!(g.validate().is_ok() && g.m <= 16384 && g.n <= 16384 && g.k <= 16384);
            let (na, nb, nc) = g.elements();
            assert!(g.flops() <= flops && na.max(nb).max(nc) <= elems, "{g}");
        }
        for layout in ["NN", "TN", "NT"] {
            assert_eq!(
                v.iter().filter(|g| g.layout() == layout).count(),
                16,
                "{layout}"
            );
        }
        let odd: Vec<_> = v.iter().filter(|g| g.pad != [0; 3]).collect();
        assert_eq!(odd.len(), 12);
        assert!(odd
            .iter()
            .all(|g| [g.lda(), g.ldb(), g.ldc()].iter().all(|ld| ld % 2 == 1)));
        // Both ends of the range: a decode-like M and a wide one.
        assert!(
            v.iter().any(|g| g.m <= 16) && v.iter().any(|g| g.m >= 4096),
            "{v:?}"
        );
    }
}
