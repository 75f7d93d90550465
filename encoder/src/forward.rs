//! The network: a quantised embedding table, three CNN n-gram branches
//! (orders 2, 3 and 5) beside the raw embedding, layer norms, a mean over
//! tokens and a small dense head ending in `tanh`, L2-normalised.
//!
//! A micro-batch runs *flat*: the tokens of all its texts are one matrix, so
//! each weight matrix streams once per batch; an n-gram window slot that would
//! reach into a neighbouring text reads zeros instead, which is exactly the
//! per-text zero padding.

use rayon::prelude::*;

use crate::format::{Kind, Model, Section};
use crate::{Error, DIM};

const EMB: usize = 512;
const CNN: usize = 256;
const HIDDEN: usize = 320;
/// The table is stored as 17 interleaved quantisation chunks: row `r` belongs
/// to chunk `r % 17`, each with its own scale and offset.
pub const CHUNKS: usize = 17;
const CHUNK_ROWS: usize = 7530;
/// (n-gram order, tokens of left context) per branch.
const ORDERS: [(usize, usize); 3] = [(2, 0), (3, 1), (5, 2)];
const FEATS: usize = EMB + ORDERS.len() * CNN;

/// Name of the dequantisation-ordered embedding table section.
pub const TABLE: &str = "table";
/// Rows of the embedding table.
pub const TABLE_ROWS: usize = CHUNKS * CHUNK_ROWS;
/// Width of the embedding table.
pub const TABLE_COLS: usize = EMB;

struct Branch {
    order: usize,
    left: usize,
    proj: Section,
    proj_b: Section,
    w1: Section,
    b1: Section,
    w2: Section,
    b2: Section,
}

/// The weights, as views into the mapped file (nothing is copied but the
/// 17 dequantisation pairs and the branch layer-norm vectors).
pub struct Weights {
    table: Section,
    scale: Vec<f32>,
    lo: Vec<f32>,
    branches: Vec<Branch>,
    branch_gamma: Vec<f32>,
    branch_beta: Vec<f32>,
    ln_g: Section,
    ln_b: Section,
    cnn_w: Section,
    cnn_b: Section,
    d0: Section,
    d1: Section,
    p1: Section,
    d2: Section,
    p3: Section,
    d3: Section,
    eps: f32,
}

impl Weights {
    pub fn new(model: &Model) -> Result<Weights, Error> {
        let f32s = |name: &str, rows: usize, cols: usize| model.section(name, Kind::F32, rows, cols);
        let vector = |name: &str, len: usize| f32s(name, 1, len);
        let mut branches = Vec::new();
        let (mut branch_gamma, mut branch_beta) = (Vec::new(), Vec::new());
        for (order, left) in ORDERS {
            branch_gamma.extend_from_slice(vector(&format!("ln_g{order}"), CNN)?.floats());
            branch_beta.extend_from_slice(vector(&format!("ln_b{order}"), CNN)?.floats());
            branches.push(Branch {
                order,
                left,
                proj: f32s(&format!("proj{order}"), EMB, CNN)?,
                proj_b: vector(&format!("proj_b{order}"), CNN)?,
                w1: f32s(&format!("w1_{order}"), order * CNN, CNN)?,
                b1: vector(&format!("b1_{order}"), CNN)?,
                w2: f32s(&format!("w2_{order}"), order * CNN, CNN)?,
                b2: vector(&format!("b2_{order}"), CNN)?,
            });
        }
        Ok(Weights {
            table: model.section(TABLE, Kind::Bytes, TABLE_ROWS, TABLE_COLS)?,
            scale: vector("scale", CHUNKS)?.floats().to_vec(),
            lo: vector("lo", CHUNKS)?.floats().to_vec(),
            branches,
            branch_gamma,
            branch_beta,
            ln_g: vector("ln_g", FEATS)?,
            ln_b: vector("ln_b", FEATS)?,
            cnn_w: f32s("cnn_W", FEATS, DIM)?,
            cnn_b: vector("cnn_b", DIM)?,
            d0: f32s("d0", DIM, HIDDEN)?,
            d1: f32s("d1", HIDDEN, HIDDEN)?,
            p1: f32s("p1", DIM, HIDDEN)?,
            d2: f32s("d2", HIDDEN, DIM)?,
            p3: f32s("p3", HIDDEN, DIM)?,
            d3: f32s("d3", DIM, DIM)?,
            eps: vector("eps", 1)?.floats()[0],
        })
    }
}

/// Columns of a piece's window-slot products: each branch's `order` slots of [`CNN`].
const SLOTS: usize = (2 + 3 + 5) * CNN;
/// Where each branch's slot products start in a row of [`Pieces`]' slots.
const SLOT_OFFSETS: [usize; 3] = [0, 2 * CNN, 5 * CNN];
/// Pieces computed per parallel task.
const PIECES_PER_TASK: usize = 64;

/// What the network computes from a piece alone, once per distinct piece of
/// a call (asset texts of a project share most of their pieces: 4,096 of
/// them hold ~2,400 distinct pieces in ~38,000 tokens): each branch's
/// projection after its layer norm, and the product of each of its first
/// layer's window slots with that slot's block of `w1`.
pub struct Pieces {
    ids: Vec<u32>,
    projected: Vec<f32>,
    slots: Vec<f32>,
}

impl Pieces {
    /// The stage of every id of `ids` (sorted, distinct, below [`TABLE_ROWS`]).
    pub fn new(w: &Weights, ids: Vec<u32>) -> Pieces {
        let width = ORDERS.len() * CNN;
        let mut projected = vec![0.0f32; ids.len() * width];
        let mut slots = vec![0.0f32; ids.len() * SLOTS];
        let task = |((chunk, projected), slots): ((&[u32], &mut [f32]), &mut [f32])| {
            let mut emb = vec![0.0f32; chunk.len() * EMB];
            for (row, &id) in emb.chunks_exact_mut(EMB).zip(chunk) {
                embedding(w, id, row);
            }
            for (i, b) in w.branches.iter().enumerate() {
                let x = &mut projected[i * CNN..];
                gemm(chunk.len(), EMB, CNN, &emb, EMB, b.proj.floats(), x, width, 0.0);
                add_bias(x, width, b.proj_b.floats());
            }
            layer_norm(projected, width, &w.branch_gamma, &w.branch_beta, w.eps);
            for (i, b) in w.branches.iter().enumerate() {
                for (slot, block) in b.w1.floats().chunks_exact(CNN * CNN).enumerate() {
                    let at = SLOT_OFFSETS[i] + slot * CNN;
                    gemm(
                        chunk.len(),
                        CNN,
                        CNN,
                        &projected[i * CNN..],
                        width,
                        block,
                        &mut slots[at..],
                        SLOTS,
                        0.0,
                    );
                }
            }
        };
        let (n, p, s) = (PIECES_PER_TASK, PIECES_PER_TASK * width, PIECES_PER_TASK * SLOTS);
        if ids.len() > n {
            let tasks = ids.par_chunks(n).zip(projected.par_chunks_mut(p));
            tasks.zip(slots.par_chunks_mut(s)).for_each(task);
        } else {
            // One task: no hand-over to the thread pool (a query's cold start).
            task(((&ids, &mut projected), &mut slots));
        }
        Pieces { ids, projected, slots }
    }
}

/// The dequantised embedding of piece `id`, into the first [`EMB`] values of `row`.
fn embedding(w: &Weights, id: u32, row: &mut [f32]) {
    let id = id as usize;
    let (scale, lo) = (w.scale[id % CHUNKS], w.lo[id % CHUNKS]);
    for (x, &q) in row.iter_mut().zip(&w.table.bytes()[id * EMB..(id + 1) * EMB]) {
        *x = f32::from(q) * scale + lo;
    }
}

/// Embed one micro-batch of token-id lists, all among `pieces`, into `out`.
pub fn embed_batch(w: &Weights, pieces: &Pieces, texts: &[Vec<u32>], out: &mut [[f32; DIM]]) {
    let tokens: usize = texts.iter().map(Vec::len).sum();
    // Each token's text as [start, end) in the flat batch.
    let mut bounds = Vec::with_capacity(tokens);
    let mut start = 0;
    for text in texts {
        bounds.extend(std::iter::repeat_n((start, start + text.len()), text.len()));
        start += text.len();
    }

    // feats = [raw embedding | branch 2 | branch 3 | branch 5], per token.
    let piece_of: Vec<usize> = texts
        .iter()
        .flatten()
        .map(|id| pieces.ids.binary_search(id).expect("every id is among the pieces"))
        .collect();
    let mut feats = vec![0.0f32; tokens * FEATS];
    for (feat, &id) in feats.chunks_exact_mut(FEATS).zip(texts.iter().flatten()) {
        embedding(w, id, feat);
    }

    let mut window = Vec::new();
    let mut h = vec![0.0f32; tokens * CNN];
    for (i, b) in w.branches.iter().enumerate() {
        first_layer(&bounds, &piece_of, pieces, i, b, &mut h);
        let c = &mut feats[EMB + i * CNN..];
        residual_layer(&mut window, &bounds, b, [&b.w2, &b.b2], (&h, CNN), (c, FEATS));
    }
    layer_norm(&mut feats, FEATS, w.ln_g.floats(), w.ln_b.floats(), w.eps);

    // Sum, then project: the sum over tokens commutes with the linear layer,
    // so this product has one row per text instead of one per token.
    let n = texts.len();
    let mut sums = vec![0.0f32; n * FEATS];
    let mut rows = feats.chunks_exact(FEATS);
    for (sum, text) in sums.chunks_exact_mut(FEATS).zip(texts) {
        for row in rows.by_ref().take(text.len()) {
            sum.iter_mut().zip(row).for_each(|(s, v)| *s += v);
        }
    }
    let mut mean = vec![0.0f32; n * DIM];
    gemm(n, FEATS, DIM, &sums, FEATS, w.cnn_w.floats(), &mut mean, DIM, 0.0);
    for (row, text) in mean.chunks_exact_mut(DIM).zip(texts) {
        let len = text.len() as f32;
        let norm = 1.0 / len.sqrt();
        row.iter_mut()
            .zip(w.cnn_b.floats())
            .for_each(|(m, b)| *m = (*m + len * b) * norm);
    }

    let y0 = relu(dense(&[(&mean, DIM, &w.d0)], HIDDEN));
    let y1 = relu(dense(&[(&mean, DIM, &w.p1), (&y0, HIDDEN, &w.d1)], HIDDEN));
    let y2 = relu(dense(&[(&y1, HIDDEN, &w.d2)], DIM));
    let z = dense(&[(&y1, HIDDEN, &w.p3), (&y2, DIM, &w.d3)], DIM);
    for (vector, row) in out.iter_mut().zip(z.chunks_exact(DIM)) {
        let mut square = 0.0;
        for (v, &x) in vector.iter_mut().zip(row) {
            *v = x.tanh();
            square += *v * *v;
        }
        let norm = 1.0 / square.max(w.eps).sqrt();
        vector.iter_mut().for_each(|v| *v *= norm);
    }
}

/// Branch `i`'s first residual n-gram convolution,
/// `h = max(windows(x) · w1 + b1, 0) + x`, where `x` (the projection) depends
/// on the piece alone: each token's sum is added up from its window's slot
/// products in `pieces`.
fn first_layer(
    bounds: &[(usize, usize)],
    piece_of: &[usize],
    pieces: &Pieces,
    i: usize,
    branch: &Branch,
    h: &mut [f32],
) {
    let bias = branch.b1.floats();
    let width = ORDERS.len() * CNN;
    for (t, (row, &(start, end))) in h.chunks_exact_mut(CNN).zip(bounds).enumerate() {
        row.copy_from_slice(bias);
        for slot in 0..branch.order {
            let Some(from) = (t + slot).checked_sub(branch.left).filter(|&s| s >= start && s < end) else {
                continue;
            };
            let at = piece_of[from] * SLOTS + SLOT_OFFSETS[i] + slot * CNN;
            let product = &pieces.slots[at..][..CNN];
            row.iter_mut().zip(product).for_each(|(v, p)| *v += p);
        }
        let x = &pieces.projected[piece_of[t] * width + i * CNN..][..CNN];
        row.iter_mut().zip(x).for_each(|(v, x)| *v = v.max(0.0) + x);
    }
}

/// One residual n-gram convolution of a branch: `out = max(windows(src) ·
/// weights + bias, 0) + src`, on the first [`CNN`] columns of rows `stride` apart.
fn residual_layer(
    window: &mut Vec<f32>,
    bounds: &[(usize, usize)],
    branch: &Branch,
    [weights, bias]: [&Section; 2],
    (src, src_stride): (&[f32], usize),
    (out, out_stride): (&mut [f32], usize),
) {
    let width = branch.order * CNN;
    gather(window, src, src_stride, bounds, branch.order, branch.left);
    gemm(
        bounds.len(),
        width,
        CNN,
        window,
        width,
        weights.floats(),
        out,
        out_stride,
        0.0,
    );
    add_bias(out, out_stride, bias.floats());
    relu_add(out, out_stride, src, src_stride);
}

/// Up to this many rows of `a` a product is summed over the rows of `b` in
/// place: `matrixmultiply` first copies all of `b` into freshly allocated
/// panels, which for a search's one query was two thirds of its embedding.
const UNPACKED_ROWS: usize = 8;

/// `c = a · b + beta · c` for row-major `a` (`m × k`, row stride `lda`),
/// contiguous `b` (`k × n`) and `c` (`m × n`, row stride `ldc`).
#[allow(clippy::too_many_arguments)]
fn gemm(m: usize, k: usize, n: usize, a: &[f32], lda: usize, b: &[f32], c: &mut [f32], ldc: usize, beta: f32) {
    if m == 0 {
        return;
    }
    assert!(a.len() >= (m - 1) * lda + k && b.len() == k * n && c.len() >= (m - 1) * ldc + n);
    if m <= UNPACKED_ROWS {
        // Each row of `b` is read once for every row of `c`, which stay in cache.
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
        return;
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

/// Add `bias` to the first `bias.len()` columns of each row (rows `stride` apart).
fn add_bias(x: &mut [f32], stride: usize, bias: &[f32]) {
    for row in x.chunks_mut(stride) {
        row.iter_mut().zip(bias).for_each(|(v, b)| *v += b);
    }
}

/// `x = max(x, 0) + residual`, on the first [`CNN`] columns of each row.
fn relu_add(x: &mut [f32], stride: usize, residual: &[f32], residual_stride: usize) {
    for (row, res) in x.chunks_mut(stride).zip(residual.chunks(residual_stride)) {
        for (v, r) in row[..CNN].iter_mut().zip(&res[..CNN]) {
            *v = v.max(0.0) + r;
        }
    }
}

fn relu(mut x: Vec<f32>) -> Vec<f32> {
    x.iter_mut().for_each(|v| *v = v.max(0.0));
    x
}

/// The sum of `input · weights` over `terms` (each input: rows of `width`
/// values), `outputs` columns wide: a dense layer with skip connections.
fn dense(terms: &[(&[f32], usize, &Section)], outputs: usize) -> Vec<f32> {
    let rows = terms[0].0.len() / terms[0].1;
    let mut out = vec![0.0f32; rows * outputs];
    for &(input, width, weights) in terms {
        gemm(
            rows,
            width,
            outputs,
            input,
            width,
            weights.floats(),
            &mut out,
            outputs,
            1.0,
        );
    }
    out
}

/// Layer norm of each `width`-wide row, in place.
fn layer_norm(x: &mut [f32], width: usize, gamma: &[f32], beta: &[f32], eps: f32) {
    for row in x.chunks_exact_mut(width) {
        let mean = row.iter().sum::<f32>() / width as f32;
        row.iter_mut().for_each(|v| *v -= mean);
        let var = row.iter().map(|v| v * v).sum::<f32>() / width as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, g), b) in row.iter_mut().zip(gamma).zip(beta) {
            *v = *v * inv * g + b;
        }
    }
}

/// The n-gram windows of `src` (first [`CNN`] columns of rows at `stride`):
/// row `t` of `window` is rows `t - left .. t - left + order`, zeros where
/// they leave `t`'s text.
fn gather(window: &mut Vec<f32>, src: &[f32], stride: usize, bounds: &[(usize, usize)], order: usize, left: usize) {
    window.clear();
    window.resize(bounds.len() * order * CNN, 0.0);
    for (t, (row, &(start, end))) in window.chunks_exact_mut(order * CNN).zip(bounds).enumerate() {
        for (slot, dest) in row.chunks_exact_mut(CNN).enumerate() {
            let Some(from) = (t + slot).checked_sub(left).filter(|&s| s >= start && s < end) else {
                continue;
            };
            dest.copy_from_slice(&src[from * stride..from * stride + CNN]);
        }
    }
}
