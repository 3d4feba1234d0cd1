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
        }
    }

    pub fn flops(&self) -> u64 {
        2 * self.m as u64 * self.n as u64 * self.k as u64
    }

    /// Elements of A, B and C.
    pub fn elements(&self) -> (usize, usize, usize) {
        (self.m * self.k, self.k * self.n, self.m * self.n)
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
            ld_first: if self.trans_b { self.k } else { self.n },
            ld_second: if self.trans_a { self.m } else { self.k },
            ldc: self.n,
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
        )
    }
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
        for (trans_a, trans_b) in [(false, false), (true, false), (false, true), (true, true)] {
            let g = RowMajorGemm {
                m,
                n,
                k,
                trans_a,
                trans_b,
            };
            let a = f32s(m * k, 1);
            let b = f32s(k * n, 2);
            // Row-major element accessors of op(A) [M,K] and op(B) [K,N].
            let op_a = |i: usize, p: usize| if trans_a { a[p * m + i] } else { a[i * k + p] };
            let op_b = |p: usize, j: usize| if trans_b { b[j * k + p] } else { b[p * n + j] };
            let got = column_major_gemm(&g.cublas_args(), &b, &a);
            for i in 0..m {
                for j in 0..n {
                    let want: f32 = (0..k).map(|p| op_a(i, p) * op_b(p, j)).sum();
                    assert!(
                        (got[i * n + j] - want).abs() < 1e-5,
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
}
