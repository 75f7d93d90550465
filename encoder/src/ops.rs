//! The f32 arithmetic the network is built from: products (through
//! `matrixmultiply`), layer norms, activations. The element-wise ones are
//! `#[inline(always)]` so that they are compiled again, for AVX-512, inside
//! [`crate::forward`]'s wide copy of a micro-batch.

/// Up to this many rows of `a` a product is summed over the rows of `b` in
/// place: `matrixmultiply` first copies all of `b` into freshly allocated
/// panels, which for a search's one query was two thirds of its embedding.
const UNPACKED_ROWS: usize = 8;

/// `c = a · b + beta · c` for row-major `a` (`m × k`, row stride `lda`),
/// contiguous `b` (`k × n`) and `c` (`m × n`, row stride `ldc`).
#[allow(clippy::too_many_arguments)]
pub fn gemm(m: usize, k: usize, n: usize, a: &[f32], lda: usize, b: &[f32], c: &mut [f32], ldc: usize, beta: f32) {
    if m == 0 {
        return;
    }
    assert!(a.len() >= (m - 1) * lda + k && b.len() == k * n && c.len() >= (m - 1) * ldc + n);
    if m <= UNPACKED_ROWS {
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has the feature `gemm_in_place_wide` is compiled for.
            return unsafe { gemm_in_place_wide(m, n, a, lda, b, c, ldc, beta) };
        }
        return gemm_in_place(m, n, a, lda, b, c, ldc, beta);
    }
    // SAFETY: the assertion keeps every element the strides reach inside the slices.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            lda as isize,
            1,
            b.as_ptr(),
            n as isize,
            1,
            beta,
            c.as_mut_ptr(),
            ldc as isize,
            1,
        );
    }
}

/// [`gemm`] of a few rows: each row of `b` is read once for every row of
/// `c`, which stay in cache.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn gemm_in_place(m: usize, n: usize, a: &[f32], lda: usize, b: &[f32], c: &mut [f32], ldc: usize, beta: f32) {
    for i in 0..m {
        let c_row = &mut c[i * ldc..i * ldc + n];
        if beta == 0.0 {
            c_row.fill(0.0); // as in BLAS: `c` is not read
        } else {
            c_row.iter_mut().for_each(|x| *x *= beta);
        }
    }
    for (p, b_row) in b.chunks_exact(n).enumerate() {
        for i in 0..m {
            let scale = a[i * lda + p];
            let c_row = &mut c[i * ldc..i * ldc + n];
            c_row.iter_mut().zip(b_row).for_each(|(x, &y)| *x += scale * y);
        }
    }
}

/// [`gemm_in_place`] compiled for AVX-512: 16 products at a time instead of
/// 4, each the same multiply then add, so the same sums.
#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f")]
fn gemm_in_place_wide(m: usize, n: usize, a: &[f32], lda: usize, b: &[f32], c: &mut [f32], ldc: usize, beta: f32) {
    gemm_in_place(m, n, a, lda, b, c, ldc, beta)
}

/// Add `bias` to the first `bias.len()` columns of each row (rows `stride` apart).
#[inline(always)]
pub fn add_bias(x: &mut [f32], stride: usize, bias: &[f32]) {
    for row in x.chunks_mut(stride) {
        row.iter_mut().zip(bias).for_each(|(v, b)| *v += b);
    }
}

/// `x = max(x, 0) + residual`, on the first `width` columns of each row.
#[inline(always)]
pub fn relu_add(width: usize, (x, stride): (&mut [f32], usize), (residual, residual_stride): (&[f32], usize)) {
    for (row, res) in x.chunks_mut(stride).zip(residual.chunks(residual_stride)) {
        for (v, r) in row[..width].iter_mut().zip(&res[..width]) {
            *v = v.max(0.0) + r;
        }
    }
}

#[inline(always)]
pub fn relu(x: &mut [f32]) {
    x.iter_mut().for_each(|v| *v = v.max(0.0));
}

/// Layer norm of each `width`-wide row, in place.
#[inline(always)]
pub fn layer_norm(x: &mut [f32], width: usize, gamma: &[f32], beta: &[f32], eps: f32) {
    for row in x.chunks_exact_mut(width) {
        let mean = sum(row, |v| v) / width as f32;
        row.iter_mut().for_each(|v| *v -= mean);
        let var = sum(row, |v| v * v) / width as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, g), b) in row.iter_mut().zip(gamma).zip(beta) {
            *v = *v * inv * g + b;
        }
    }
}

/// The sum of `f` over `values`, in 16 interleaved partial sums: one running
/// sum would wait on each addition in turn (a third of the time left once the
/// products ran in int8).
#[inline(always)]
pub fn sum(values: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    let mut lanes = [0.0f32; 16];
    let mut chunks = values.chunks_exact(16);
    for chunk in chunks.by_ref() {
        lanes.iter_mut().zip(chunk).for_each(|(s, &v)| *s += f(v));
    }
    lanes.iter().sum::<f32>() + chunks.remainder().iter().map(|&v| f(v)).sum::<f32>()
}

/// `tanh` as Eigen's rational approximation (`ptanh_float`): within 5e-7 of
/// `f32::tanh`, and vectorised, where `tanhf` is a library call per value
/// (7% of the time left once the products ran in int8).
#[inline(always)]
pub fn tanh(x: f32) -> f32 {
    let x = x.clamp(-7.905_311, 7.905_311);
    let x2 = x * x;
    let p = [
        -2.760_768_5e-16,
        2.000_188e-13,
        -8.604_672e-11,
        5.122_297e-8,
        1.485_722_4e-5,
        6.372_619_3e-4,
    ]
    .iter()
    .fold(0.0, |p, &a| p * x2 + a);
    let p = x * (p * x2 + 4.893_524_6e-3);
    let q = [1.198_258_4e-6, 1.185_347_1e-4, 2.268_434_6e-3]
        .iter()
        .fold(0.0, |q, &b| q * x2 + b);
    let q = q * x2 + 4.893_525e-3;
    if x.abs() < 0.0004 {
        x
    } else {
        p / q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tanh_is_within_5e_7_of_the_library_one() {
        let mut worst = 0.0f32;
        for i in -200_000..=200_000 {
            let x = i as f32 * 1e-4;
            worst = worst.max((tanh(x) - x.tanh()).abs());
        }
        assert!(worst < 5e-7, "{worst}");
        assert_eq!(
            (tanh(50.0), tanh(-50.0), tanh(0.0)),
            (tanh(7.905_311), -tanh(7.905_311), 0.0)
        );
    }

    #[test]
    fn sum_and_layer_norm_of_a_row_longer_than_the_lanes() {
        let x: Vec<f32> = (0..37).map(|i| i as f32).collect();
        assert_eq!(sum(&x, |v| v), 666.0);
        assert_eq!(sum(&x, |v| v * v), (0..37).map(|i| (i * i) as f32).sum::<f32>());
        let mut row = x.clone();
        layer_norm(&mut row, 37, &[2.0; 37], &[1.0; 37], 0.0);
        assert!((sum(&row, |v| v) / 37.0 - 1.0).abs() < 1e-5, "mean is beta");
        let var = sum(&row, |v| (v - 1.0) * (v - 1.0)) / 37.0;
        assert!((var - 4.0).abs() < 1e-4, "variance is gamma²: {var}");
    }

    #[test]
    fn a_few_rows_give_the_same_sums_on_every_width() {
        let (m, k, n) = (3, 37, 70);
        let value = |i: usize| ((i * 7919) % 1000) as f32 / 997.0 - 0.5;
        let a: Vec<f32> = (0..m * k).map(value).collect();
        let b: Vec<f32> = (0..k * n).map(|i| value(i + 13)).collect();
        let mut portable = vec![0.25f32; m * n];
        let mut chosen = portable.clone();
        gemm_in_place(m, n, &a, k, &b, &mut portable, n, 1.0);
        gemm(m, k, n, &a, k, &b, &mut chosen, n, 1.0);
        assert_eq!(portable, chosen, "the wide copy (where the CPU has it) sums alike");
        let expected: f32 = 0.25 + (0..k).map(|p| a[p] * b[p * n]).sum::<f32>();
        assert!((portable[0] - expected).abs() < 1e-5);
    }
}
