//! Matrix products in int8 on CPUs with AVX-512 VNNI, whose `vpdpbusd`
//! does 64 multiply-adds (u8 × i8, summed in fours into i32 lanes) where an
//! f32 FMA does 16.
//!
//! A weight matrix is quantised once, per output column (symmetric i8, scale
//! `max |w| / 127`) and packed in the kernel's order ([`Matrix`]); each row
//! of activations is quantised as it comes, to u8 with a zero point (its
//! range, widened to hold 0 exactly, in 255 steps). The zero point is taken
//! out with the weight columns' sums, so that
//! `c[i][j] = sa[i] · sb[j] · (Σ qa[i][p] · qb[p][j] − za[i] · Σ qb[p][j])`.
//! Each row is quantised alone: a text's vector does not depend on the texts
//! it is batched with.

/// Columns of `c` one kernel call computes: four vectors of 16 lanes.
const NR: usize = 64;
/// Rows of `c` one kernel call computes: 6 × 4 accumulators and the 4 vectors
/// of `b` take 28 of the 32 vector registers.
const MR: usize = 6;

/// Whether this CPU has what [`Rows::quantise`] and [`Matrix::product`] need.
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vnni")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// A `k × n` weight matrix in i8, one scale per column; `k` a multiple of 16
/// (a vector of activations) and `n` of 64. Packed as panels of 64 columns;
/// in a panel, each group of 4 rows is 64 lanes of 4 bytes (a lane is a
/// column), as `vpdpbusd` reads them.
pub struct Matrix {
    k: usize,
    n: usize,
    packed: Vec<i8>,
    scale: Vec<f32>,
    sums: Vec<i32>,
    /// The rounding error of this matrix, quantised in turn, for products
    /// that need the weights to ~15 bits ([`Matrix::refined`]).
    error: Option<Box<Matrix>>,
}

impl Matrix {
    /// Quantise row-major `w` (`k × n`).
    pub fn new(w: &[f32], k: usize, n: usize) -> Matrix {
        assert!(
            w.len() == k * n && k.is_multiple_of(16) && n.is_multiple_of(NR),
            "{k} × {n}"
        );
        let mut scale = vec![0.0f32; n];
        for row in w.chunks_exact(n) {
            scale.iter_mut().zip(row).for_each(|(s, v)| *s = s.max(v.abs()));
        }
        // An all-zero column stays zero whatever its scale.
        scale
            .iter_mut()
            .for_each(|s| *s = if *s > 0.0 { *s / 127.0 } else { 1.0 });
        let inverse: Vec<f32> = scale.iter().map(|s| 1.0 / s).collect();
        let mut quantised = vec![0i8; k * n];
        let mut sums = vec![0i32; n];
        for (q, row) in quantised.chunks_exact_mut(n).zip(w.chunks_exact(n)) {
            for ((q, &v), &inverse) in q.iter_mut().zip(row).zip(&inverse) {
                // Rounded half away from zero by truncation (`f32::round`
                // is a library call on x86-64's baseline).
                let x = v * inverse;
                *q = (x + 0.5f32.copysign(x)) as i8;
            }
            sums.iter_mut().zip(q.iter()).for_each(|(sum, &q)| *sum += i32::from(q));
        }
        // In the order `block` reads: panel, group of 4 rows, lane, row.
        let mut packed = Vec::with_capacity(k * n);
        for panel in (0..n).step_by(NR) {
            for group in (0..k).step_by(4) {
                for j in panel..panel + NR {
                    packed.extend((group..group + 4).map(|p| quantised[p * n + j]));
                }
            }
        }
        Matrix {
            k,
            n,
            packed,
            scale,
            sums,
            error: None,
        }
    }

    /// [`Matrix::new`] and its rounding error in a second i8 matrix, added
    /// to each product (which takes twice as long).
    pub fn refined(w: &[f32], k: usize, n: usize) -> Matrix {
        let mut matrix = Matrix::new(w, k, n);
        let mut error = w.to_vec();
        for (p, row) in error.chunks_exact_mut(n).enumerate() {
            for (j, (v, &s)) in row.iter_mut().zip(&matrix.scale).enumerate() {
                *v -= f32::from(matrix.get(p, j)) * s;
            }
        }
        matrix.error = Some(Box::new(Matrix::new(&error, k, n)));
        matrix
    }

    /// The quantised weight of row `p`, column `j`.
    fn get(&self, p: usize, j: usize) -> i8 {
        self.packed[((j / NR * self.k + p) / 4 * NR + j % NR) * 4 + p % 4]
    }

    /// `c = a · self` (or `c += a · self` when `accumulate`) for the rows `a`
    /// were quantised from; `c` holds their `n` columns at row stride `ldc`.
    pub fn product(&self, a: &Rows, c: &mut [f32], ldc: usize, accumulate: bool) {
        let (m, n) = (a.m, self.n);
        assert!(a.k == self.k && (m == 0 || c.len() >= (m - 1) * ldc + n));
        #[cfg(target_arch = "x86_64")]
        for first in (0..m).step_by(MR) {
            let c = &mut c[first * ldc..];
            // SAFETY: `a` was quantised, so the CPU has VNNI; `a` holds `m`
            // rows of `k` values, `self` is `k × n` packed as `block` reads it,
            // and the assertion keeps the block's rows of `c` inside `c`.
            unsafe {
                match (m - first).min(MR) {
                    1 => vnni::block::<1>(a, first, self, c, ldc, accumulate),
                    2 => vnni::block::<2>(a, first, self, c, ldc, accumulate),
                    3 => vnni::block::<3>(a, first, self, c, ldc, accumulate),
                    4 => vnni::block::<4>(a, first, self, c, ldc, accumulate),
                    5 => vnni::block::<5>(a, first, self, c, ldc, accumulate),
                    _ => vnni::block::<MR>(a, first, self, c, ldc, accumulate),
                }
            }
        }
        if let Some(error) = &self.error {
            error.product(a, c, ldc, true);
        }
    }
}

/// Rows of activations quantised for [`Matrix::product`]: u8 values, and
/// each row's scale and zero point. Kept to be filled again without allocating.
#[derive(Default)]
pub struct Rows {
    m: usize,
    k: usize,
    q: Vec<u8>,
    scale: Vec<f32>,
    zero: Vec<i32>,
}

impl Rows {
    /// Quantise `m` rows of `k` values, each row `parts` parts side by side:
    /// `part(i, j)` is part `j` of row `i` (`k / parts` values, a multiple of
    /// 16), or `None` for zeros. An n-gram window is quantised this way
    /// straight from the token rows it covers. Only where [`available`].
    pub fn quantise<'a>(&mut self, m: usize, k: usize, parts: usize, part: impl Fn(usize, usize) -> Option<&'a [f32]>) {
        assert!(available(), "int8 products need AVX-512 VNNI");
        assert!(k.is_multiple_of(16 * parts), "{k} values in {parts} parts");
        (self.m, self.k) = (m, k);
        // Grown, never shrunk: refilled values need no zeroing.
        if self.q.len() < m * k {
            self.q.resize(m * k, 0);
        }
        if self.scale.len() < m {
            self.scale.resize(m, 0.0);
            self.zero.resize(m, 0);
        }
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `available` checked the CPU features.
        unsafe {
            vnni::quantise(self, m, parts, part)
        }
    }

    /// Quantise the `m` rows of `a` (`k` values each, at row stride `lda`).
    pub fn quantise_matrix(&mut self, m: usize, k: usize, a: &[f32], lda: usize) {
        self.quantise(m, k, 1, |i, _| Some(&a[i * lda..i * lda + k]));
    }
}

#[cfg(target_arch = "x86_64")]
mod vnni {
    use std::arch::x86_64::*;

    use super::{Matrix, Rows, NR};

    /// Fill `rows` (sized for `m` rows) as [`Rows::quantise`] says.
    ///
    /// # Safety
    /// The CPU has AVX-512 F and BW.
    #[target_feature(enable = "avx512f,avx512bw")]
    pub unsafe fn quantise<'a>(
        rows: &mut Rows,
        m: usize,
        parts: usize,
        part: impl Fn(usize, usize) -> Option<&'a [f32]>,
    ) {
        let width = rows.k / parts;
        for i in 0..m {
            let (mut lo, mut hi) = (_mm512_setzero_ps(), _mm512_setzero_ps());
            for x in (0..parts).filter_map(|j| part(i, j)) {
                assert_eq!(x.len(), width);
                for v in x.chunks_exact(16) {
                    let v = _mm512_loadu_ps(v.as_ptr());
                    (lo, hi) = (_mm512_min_ps(lo, v), _mm512_max_ps(hi, v));
                }
            }
            let (lo, hi) = (_mm512_reduce_min_ps(lo), _mm512_reduce_max_ps(hi));
            let scale = if hi > lo { (hi - lo) / 255.0 } else { 1.0 };
            let zero = (-lo / scale).round().clamp(0.0, 255.0);
            let (inverse, offset) = (_mm512_set1_ps(1.0 / scale), _mm512_set1_ps(zero));
            let row = &mut rows.q[i * rows.k..(i + 1) * rows.k];
            for (j, q) in row.chunks_exact_mut(width).enumerate() {
                let Some(x) = part(i, j) else {
                    q.fill(zero as u8);
                    continue;
                };
                for (v, q) in x.chunks_exact(16).zip(q.chunks_exact_mut(16)) {
                    let v = _mm512_fmadd_ps(_mm512_loadu_ps(v.as_ptr()), inverse, offset);
                    let v = _mm512_max_epi32(_mm512_cvtps_epi32(v), _mm512_setzero_si512());
                    _mm_storeu_si128(q.as_mut_ptr().cast(), _mm512_cvtusepi32_epi8(v));
                }
            }
            (rows.scale[i], rows.zero[i]) = (scale, zero as i32);
        }
    }

    /// Rows `first .. first + R` of `c` (which starts at row `first`), all
    /// `b.n` columns.
    ///
    /// # Safety
    /// The CPU has AVX-512 F, BW and VNNI; `rows` has rows `first + R - 1`;
    /// `c` holds `R` rows of `b.n` values at stride `ldc`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub unsafe fn block<const R: usize>(
        rows: &Rows,
        first: usize,
        b: &Matrix,
        c: &mut [f32],
        ldc: usize,
        accumulate: bool,
    ) {
        let k = b.k;
        let a = rows.q.as_ptr().add(first * k);
        for panel in 0..b.n / NR {
            let mut acc = [[_mm512_setzero_si512(); 4]; R];
            let weights = b.packed.as_ptr().add(panel * k * NR);
            for p in 0..k / 4 {
                let w = weights.add(p * 4 * NR);
                let v = [0, 1, 2, 3].map(|v| _mm512_loadu_si512(w.add(v * 64).cast()));
                for (r, acc) in acc.iter_mut().enumerate() {
                    let x = _mm512_set1_epi32(a.add(r * k + p * 4).cast::<i32>().read_unaligned());
                    for (acc, &v) in acc.iter_mut().zip(&v) {
                        *acc = _mm512_dpbusd_epi32(*acc, x, v);
                    }
                }
            }
            for (r, acc) in acc.iter().enumerate() {
                let zero = _mm512_set1_epi32(rows.zero[first + r]);
                let scale = _mm512_set1_ps(rows.scale[first + r]);
                for (v, &acc) in acc.iter().enumerate() {
                    let j = panel * NR + v * 16;
                    let sums = _mm512_loadu_si512(b.sums.as_ptr().add(j).cast());
                    let exact = _mm512_sub_epi32(acc, _mm512_mullo_epi32(zero, sums));
                    let column = _mm512_loadu_ps(b.scale.as_ptr().add(j));
                    let mut y = _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(exact), scale), column);
                    let out = c.as_mut_ptr().add(r * ldc + j);
                    if accumulate {
                        y = _mm512_add_ps(y, _mm512_loadu_ps(out));
                    }
                    _mm512_storeu_ps(out, y);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic values in [-1, 1).
    fn values(len: usize, seed: u32) -> Vec<f32> {
        let mut x = seed.wrapping_mul(2_654_435_761).max(1);
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                (x >> 8) as f32 / (1 << 23) as f32 - 1.0
            })
            .collect()
    }

    #[test]
    fn a_row_is_quantised_with_zero_exact_and_its_ends_reached() {
        if !available() {
            eprintln!("skipped: this CPU has no AVX-512 VNNI (the f32 path runs)");
            return;
        }
        let mut a = [0.0f32; 16];
        a[..4].copy_from_slice(&[0.0, -1.0, 0.5, 3.0]);
        let mut rows = Rows::default();
        rows.quantise_matrix(1, 16, &a, 16);
        assert_eq!(rows.q[0] as i32, rows.zero[0], "zero maps to the zero point");
        assert_eq!((rows.q[1], rows.q[3]), (0, 255));
        for (&q, &v) in rows.q.iter().zip(&a) {
            let back = (q as i32 - rows.zero[0]) as f32 * rows.scale[0];
            assert!((back - v).abs() <= rows.scale[0] / 2.0 + 1e-6, "{v} -> {back}");
        }
        rows.quantise_matrix(1, 16, &[0.0; 16], 16);
        assert_eq!(rows.q, [0; 16]);
    }

    #[test]
    fn the_int8_product_is_close_to_the_f32_one() {
        if !available() {
            eprintln!("skipped: this CPU has no AVX-512 VNNI (the f32 path runs)");
            return;
        }
        let (m, k, n, lda, ldc) = (13, 256, 128, 260, 136);
        // Rows of mixed sign and range, one all zero, and a column all zero.
        let mut a = values(m * lda, 1);
        a[3 * lda..3 * lda + k].fill(0.0);
        a[5 * lda..5 * lda + k].iter_mut().for_each(|v| *v = v.abs() * 8.0);
        let mut w = values(k * n, 2);
        w.iter_mut().skip(7).step_by(n).for_each(|v| *v = 0.0);
        let matrix = Matrix::new(&w, k, n);
        let mut rows = Rows::default();
        rows.quantise_matrix(m, k, &a, lda);
        let mut c = vec![1.0f32; m * ldc];
        matrix.product(&rows, &mut c, ldc, true);
        for i in 0..m {
            let mut worst = 0.0f32;
            let mut norm = 0.0f32;
            for j in 0..n {
                let exact: f32 = 1.0 + (0..k).map(|p| a[i * lda + p] * w[p * n + j]).sum::<f32>();
                worst = worst.max((c[i * ldc + j] - exact).abs());
                norm = norm.max(exact.abs());
                if j == 7 || i == 3 {
                    assert_eq!(c[i * ldc + j], 1.0, "a zero row or column adds nothing");
                }
            }
            assert!(worst <= 0.01 * norm, "row {i}: error {worst} against {norm}");
        }
        assert!(c[ldc - 1] == 1.0 && c[ldc - 8] == 1.0, "columns past n are not written");

        // The same rows in two parts, the second of row 2 missing: as zeros.
        let mut zeroed = a.clone();
        zeroed[2 * lda + k / 2..2 * lda + k].fill(0.0);
        rows.quantise_matrix(m, k, &zeroed, lda);
        let mut expected = vec![0.0f32; m * n];
        matrix.product(&rows, &mut expected, n, false);
        let half = k / 2;
        rows.quantise(m, k, 2, |i, j| {
            (i != 2 || j == 0).then(|| &a[i * lda + j * half..i * lda + (j + 1) * half])
        });
        let mut parts = vec![0.0f32; m * n];
        matrix.product(&rows, &mut parts, n, false);
        assert_eq!(parts, expected);
    }

    #[test]
    fn a_refined_matrix_adds_its_rounding_error_back() {
        if !available() {
            eprintln!("skipped: this CPU has no AVX-512 VNNI (the f32 path runs)");
            return;
        }
        let (m, k, n) = (4, 64, 64);
        // Rows of whole numbers from 0 to 255 quantise exactly: what remains
        // is the weights' error.
        let a: Vec<f32> = (0..m * k)
            .map(|i| if i % k == 0 { 255.0 } else { ((i * 37) % 256) as f32 })
            .collect();
        let w = values(k * n, 3);
        let mut rows = Rows::default();
        rows.quantise_matrix(m, k, &a, k);
        let error = |matrix: Matrix| {
            let mut c = vec![0.0f32; m * n];
            matrix.product(&rows, &mut c, n, false);
            (0..m * n)
                .map(|i| (c[i] - (0..k).map(|p| a[i / n * k + p] * w[p * n + i % n]).sum::<f32>()).abs())
                .fold(0.0f32, f32::max)
        };
        let (plain, refined) = (error(Matrix::new(&w, k, n)), error(Matrix::refined(&w, k, n)));
        assert!(refined < plain / 50.0, "plain {plain}, refined {refined}");
    }
}
