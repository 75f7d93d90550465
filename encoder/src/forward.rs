//! The network: a quantised embedding table, three CNN n-gram branches
//! (orders 2, 3 and 5) beside the raw embedding, layer norms, a mean over
//! tokens and a small dense head ending in `tanh`, L2-normalised.
//!
//! A micro-batch runs *flat*: the tokens of all its texts are one matrix, so
//! each weight matrix streams once per batch; an n-gram window slot that would
//! reach into a neighbouring text reads zeros instead, which is exactly the
//! per-text zero padding.
//!
//! A call of many texts on a CPU with AVX-512 VNNI multiplies in int8
//! ([`Quantised`], [`crate::int8`]); one of a few texts, or any call on
//! another CPU, in f32 (the two within a cosine of 0.999, 0.9997 on average).

use rayon::prelude::*;

use crate::format::{Kind, Model, Section};
use crate::ops::{add_bias, gemm, layer_norm, relu, relu_add, tanh};
use crate::{int8, Error, DIM};

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
    quantised: std::sync::OnceLock<Quantised>,
}

/// The int8 copies of the matrices multiplied per piece, per token or per
/// text, quantised on first use (~25 ms; a query, embedded in f32, never
/// needs them).
pub struct Quantised {
    /// The three branches' projections side by side.
    proj: int8::Matrix,
    /// Per branch, the blocks of `w1` side by side: a piece's products with
    /// every window slot of the first layer in one.
    w1: Vec<int8::Matrix>,
    w2: Vec<int8::Matrix>,
    cnn_w: int8::Matrix,
    head: [int8::Matrix; 6],
}

impl Weights {
    /// The int8 matrices, quantised on the first call.
    pub fn quantised(&self) -> &Quantised {
        self.quantised.get_or_init(|| {
            let q = |s: &Section, k: usize, n: usize| int8::Matrix::new(s.floats(), k, n);
            let projections: Vec<&[f32]> = self.branches.iter().map(|b| b.proj.floats()).collect();
            let w1 = |b: &Branch| {
                let slots: Vec<&[f32]> = b.w1.floats().chunks_exact(CNN * CNN).collect();
                int8::Matrix::new(&side_by_side(&slots, CNN), CNN, b.order * CNN)
            };
            Quantised {
                proj: int8::Matrix::new(&side_by_side(&projections, EMB), EMB, BRANCHES),
                w1: self.branches.iter().map(w1).collect(),
                w2: self.branches.iter().map(|b| q(&b.w2, b.order * CNN, CNN)).collect(),
                cnn_w: q(&self.cnn_w, FEATS, DIM),
                head: self.head().map(|(s, k, n)| match std::ptr::eq(s, &self.p3) {
                    // p3 adds straight into the output: with its weights in
                    // plain i8, the vectors' mean cosine to f32 fell from
                    // 0.99972 to 0.99941, for 1% of the time.
                    true => int8::Matrix::refined(s.floats(), k, n),
                    false => q(s, k, n),
                }),
            }
        })
    }

    /// The dense head's matrices (d0, p1, d1, d2, p3, d3) and their shapes.
    fn head(&self) -> [(&Section, usize, usize); 6] {
        [
            (&self.d0, DIM, HIDDEN),
            (&self.p1, DIM, HIDDEN),
            (&self.d1, HIDDEN, HIDDEN),
            (&self.d2, HIDDEN, DIM),
            (&self.p3, HIDDEN, DIM),
            (&self.d3, DIM, DIM),
        ]
    }
}

/// Matrices of `rows` rows each, side by side in one.
fn side_by_side(blocks: &[&[f32]], rows: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(blocks.iter().map(|b| b.len()).sum());
    for r in 0..rows {
        for block in blocks {
            let n = block.len() / rows;
            out.extend_from_slice(&block[r * n..(r + 1) * n]);
        }
    }
    out
}

/// A weight matrix as a product reads it: the f32 one of the file, or its int8 copy.
#[derive(Clone, Copy)]
enum Matrix<'a> {
    F32(&'a [f32]),
    Int8(&'a int8::Matrix),
}

impl<'a> Matrix<'a> {
    fn pick(f32: &'a Section, int8: Option<&'a int8::Matrix>) -> Matrix<'a> {
        int8.map_or(Matrix::F32(f32.floats()), Matrix::Int8)
    }

    /// `c = a · self` (`c += a · self` when `accumulate`) for `a` of `m × k`
    /// and `c` of `m × n`, each with its row stride; `rows` holds `a` in int8.
    #[inline(always)]
    fn product(
        self,
        (m, k, n): (usize, usize, usize),
        (a, lda): (&[f32], usize),
        (c, ldc): (&mut [f32], usize),
        accumulate: bool,
        rows: &mut int8::Rows,
    ) {
        match self {
            Matrix::F32(b) => gemm(m, k, n, a, lda, b, c, ldc, if accumulate { 1.0 } else { 0.0 }),
            Matrix::Int8(b) => {
                rows.quantise_matrix(m, k, a, lda);
                b.product(rows, c, ldc, accumulate);
            }
        }
    }
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
            quantised: std::sync::OnceLock::new(),
        })
    }
}

/// Columns of a piece's window-slot products: each branch's `order` slots of [`CNN`].
const SLOTS: usize = (2 + 3 + 5) * CNN;
/// Where each branch's slot products start in a row of [`Pieces`]' slots.
const SLOT_OFFSETS: [usize; 3] = [0, 2 * CNN, 5 * CNN];
/// Columns of the three branches side by side.
const BRANCHES: usize = ORDERS.len() * CNN;
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
    /// The stage of every id of `ids` (sorted, distinct, below [`TABLE_ROWS`]),
    /// in int8 when `q` is given.
    pub fn new(w: &Weights, q: Option<&Quantised>, ids: Vec<u32>) -> Pieces {
        let mut projected = vec![0.0f32; ids.len() * BRANCHES];
        let mut slots = vec![0.0f32; ids.len() * SLOTS];
        let task = |((chunk, projected), slots): ((&[u32], &mut [f32]), &mut [f32])| {
            let m = chunk.len();
            let mut emb = vec![0.0f32; m * EMB];
            for (row, &id) in emb.chunks_exact_mut(EMB).zip(chunk) {
                embedding(w, id, row);
            }
            let mut rows = int8::Rows::default();
            match q {
                Some(q) => Matrix::Int8(&q.proj).product(
                    (m, EMB, BRANCHES),
                    (&emb, EMB),
                    (projected, BRANCHES),
                    false,
                    &mut rows,
                ),
                None => {
                    for (i, b) in w.branches.iter().enumerate() {
                        gemm(
                            m,
                            EMB,
                            CNN,
                            &emb,
                            EMB,
                            b.proj.floats(),
                            &mut projected[i * CNN..],
                            BRANCHES,
                            0.0,
                        );
                    }
                }
            }
            let biases: Vec<f32> = w.branches.iter().flat_map(|b| b.proj_b.floats()).copied().collect();
            add_bias(projected, BRANCHES, &biases);
            layer_norm(projected, BRANCHES, &w.branch_gamma, &w.branch_beta, w.eps);
            for (i, b) in w.branches.iter().enumerate() {
                let (x, out) = (
                    (&projected[i * CNN..], BRANCHES),
                    (&mut slots[SLOT_OFFSETS[i]..], SLOTS),
                );
                match q {
                    Some(q) => Matrix::Int8(&q.w1[i]).product((m, CNN, b.order * CNN), x, out, false, &mut rows),
                    None => {
                        for (slot, block) in b.w1.floats().chunks_exact(CNN * CNN).enumerate() {
                            gemm(m, CNN, CNN, x.0, x.1, block, &mut out.0[slot * CNN..], SLOTS, 0.0);
                        }
                    }
                }
            }
        };
        let (n, p, s) = (PIECES_PER_TASK, PIECES_PER_TASK * BRANCHES, PIECES_PER_TASK * SLOTS);
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
#[inline(always)]
fn embedding(w: &Weights, id: u32, row: &mut [f32]) {
    let id = id as usize;
    let (scale, lo) = (w.scale[id % CHUNKS], w.lo[id % CHUNKS]);
    for (x, &q) in row.iter_mut().zip(&w.table.bytes()[id * EMB..(id + 1) * EMB]) {
        *x = f32::from(q) * scale + lo;
    }
}

/// The buffers of a micro-batch, which a thread keeps for the next one
/// (allocating and zeroing them for each batch took 8% of the time).
#[derive(Default)]
pub struct Scratch {
    bounds: Vec<(usize, usize)>,
    piece_of: Vec<usize>,
    feats: Vec<f32>,
    h: Vec<f32>,
    window: Vec<f32>,
    rows: int8::Rows,
}

/// The first `len` values of `buffer`, grown if need be: values left from
/// an earlier batch, which the caller overwrites.
fn reuse(buffer: &mut Vec<f32>, len: usize) -> &mut [f32] {
    if buffer.len() < len {
        buffer.resize(len, 0.0);
    }
    &mut buffer[..len]
}

/// Embed one micro-batch of token-id lists, all among `pieces`, into `out`;
/// in int8 when `q` is given.
pub fn embed_batch(
    w: &Weights,
    q: Option<&Quantised>,
    pieces: &Pieces,
    texts: &[Vec<u32>],
    out: &mut [[f32; DIM]],
    scratch: &mut Scratch,
) {
    #[cfg(target_arch = "x86_64")]
    if is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw") {
        // SAFETY: the CPU has the features `embed_wide` is compiled for.
        return unsafe { embed_wide(w, q, pieces, texts, out, scratch) };
    }
    embed(w, q, pieces, texts, out, scratch)
}

/// [`embed`] compiled for AVX-512: its element-wise loops (layer norms, sums,
/// the first layer's additions, `tanh`) run 16 wide instead of 4, for a
/// sixth less time; the same operations in the same order, so the same
/// vectors.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
fn embed_wide(
    w: &Weights,
    q: Option<&Quantised>,
    pieces: &Pieces,
    texts: &[Vec<u32>],
    out: &mut [[f32; DIM]],
    scratch: &mut Scratch,
) {
    embed(w, q, pieces, texts, out, scratch)
}

#[inline(always)]
fn embed(
    w: &Weights,
    q: Option<&Quantised>,
    pieces: &Pieces,
    texts: &[Vec<u32>],
    out: &mut [[f32; DIM]],
    scratch: &mut Scratch,
) {
    let tokens: usize = texts.iter().map(Vec::len).sum();
    // Each token's text as [start, end) in the flat batch.
    let bounds = &mut scratch.bounds;
    bounds.clear();
    let mut start = 0;
    for text in texts {
        bounds.extend(std::iter::repeat_n((start, start + text.len()), text.len()));
        start += text.len();
    }
    let piece_of = &mut scratch.piece_of;
    piece_of.clear();
    let index = |id| pieces.ids.binary_search(id).expect("every id is among the pieces");
    piece_of.extend(texts.iter().flatten().map(index));

    // feats = [raw embedding | branch 2 | branch 3 | branch 5], per token.
    let feats = reuse(&mut scratch.feats, tokens * FEATS);
    for (feat, &id) in feats.chunks_exact_mut(FEATS).zip(texts.iter().flatten()) {
        embedding(w, id, feat);
    }
    let h = reuse(&mut scratch.h, tokens * CNN);
    for (i, b) in w.branches.iter().enumerate() {
        first_layer(bounds, piece_of, pieces, i, b, h);
        let w2 = Matrix::pick(&b.w2, q.map(|q| &q.w2[i]));
        let out = (&mut feats[EMB + i * CNN..], FEATS);
        residual_layer((&mut scratch.window, &mut scratch.rows), bounds, b, w2, (h, CNN), out);
    }
    layer_norm(feats, FEATS, w.ln_g.floats(), w.ln_b.floats(), w.eps);

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
    let cnn_w = Matrix::pick(&w.cnn_w, q.map(|q| &q.cnn_w));
    cnn_w.product(
        (n, FEATS, DIM),
        (&sums, FEATS),
        (&mut mean, DIM),
        false,
        &mut scratch.rows,
    );
    for (row, text) in mean.chunks_exact_mut(DIM).zip(texts) {
        let len = text.len() as f32;
        let norm = 1.0 / len.sqrt();
        row.iter_mut()
            .zip(w.cnn_b.floats())
            .for_each(|(m, b)| *m = (*m + len * b) * norm);
    }

    let mut quantised = q.map(|q| q.head.iter());
    let [d0, p1, d1, d2, p3, d3] = w
        .head()
        .map(|(s, _, _)| Matrix::pick(s, quantised.as_mut().and_then(Iterator::next)));
    let rows = &mut scratch.rows;
    let mut y0 = dense(&[(&mean, DIM, d0)], HIDDEN, rows);
    relu(&mut y0);
    let mut y1 = dense(&[(&mean, DIM, p1), (&y0, HIDDEN, d1)], HIDDEN, rows);
    relu(&mut y1);
    let mut y2 = dense(&[(&y1, HIDDEN, d2)], DIM, rows);
    relu(&mut y2);
    let mut z = dense(&[(&y1, HIDDEN, p3), (&y2, DIM, d3)], DIM, rows);
    for (vector, row) in out.iter_mut().zip(z.chunks_exact_mut(DIM)) {
        row.iter_mut().for_each(|x| *x = tanh(*x));
        let square = crate::ops::sum(row, |v| v * v);
        let norm = 1.0 / square.max(w.eps).sqrt();
        vector.iter_mut().zip(row).for_each(|(v, x)| *v = *x * norm);
    }
}

/// Branch `i`'s first residual n-gram convolution,
/// `h = max(windows(x) · w1 + b1, 0) + x`, where `x` (the projection) depends
/// on the piece alone: each token's sum is added up from its window's slot
/// products in `pieces`.
#[inline(always)]
fn first_layer(
    bounds: &[(usize, usize)],
    piece_of: &[usize],
    pieces: &Pieces,
    i: usize,
    branch: &Branch,
    h: &mut [f32],
) {
    let bias = branch.b1.floats();
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
        let x = &pieces.projected[piece_of[t] * BRANCHES + i * CNN..][..CNN];
        row.iter_mut().zip(x).for_each(|(v, x)| *v = v.max(0.0) + x);
    }
}

/// One residual n-gram convolution of a branch: `out = max(windows(src) ·
/// w2 + b2, 0) + src`, on the first [`CNN`] columns of rows `stride` apart.
/// In int8 the windows are quantised straight from `src`; in f32 they are
/// gathered into `window` first.
#[inline(always)]
fn residual_layer(
    (window, rows): (&mut Vec<f32>, &mut int8::Rows),
    bounds: &[(usize, usize)],
    branch: &Branch,
    w2: Matrix,
    (src, src_stride): (&[f32], usize),
    (out, out_stride): (&mut [f32], usize),
) {
    let (m, width) = (bounds.len(), branch.order * CNN);
    // Slot `slot` of token `t`'s window: a row of its text, or zeros past it.
    let part = |t: usize, slot: usize| {
        let (start, end) = bounds[t];
        let from = (t + slot).checked_sub(branch.left).filter(|&s| s >= start && s < end)?;
        Some(&src[from * src_stride..from * src_stride + CNN])
    };
    match w2 {
        Matrix::Int8(b) => {
            rows.quantise(m, width, branch.order, part);
            b.product(rows, out, out_stride, false);
        }
        Matrix::F32(b) => {
            let window = reuse(window, m * width);
            for (t, row) in window.chunks_exact_mut(width).enumerate() {
                for (slot, dest) in row.chunks_exact_mut(CNN).enumerate() {
                    match part(t, slot) {
                        Some(x) => dest.copy_from_slice(x),
                        None => dest.fill(0.0),
                    }
                }
            }
            gemm(m, width, CNN, window, width, b, out, out_stride, 0.0);
        }
    }
    add_bias(out, out_stride, branch.b2.floats());
    relu_add(CNN, (out, out_stride), (src, src_stride));
}

/// The sum of `input · weights` over `terms` (each input: rows of `width`
/// values), `outputs` columns wide: a dense layer with skip connections.
#[inline(always)]
fn dense(terms: &[(&[f32], usize, Matrix)], outputs: usize, rows: &mut int8::Rows) -> Vec<f32> {
    let m = terms[0].0.len() / terms[0].1;
    let mut out = vec![0.0f32; m * outputs];
    for &(input, width, weights) in terms {
        weights.product((m, width, outputs), (input, width), (&mut out, outputs), true, rows);
    }
    out
}
