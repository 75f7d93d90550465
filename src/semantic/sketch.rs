//! The sign sketch of the vectors: one bit per dimension (is the value
//! positive), so a 512-d row is eight 64-bit words. The Hamming distance of
//! two sketches follows the angle between their vectors, so ranking every
//! row by it costs eight XOR-and-popcounts a row — a million rows in a few
//! milliseconds, where the exact int8 cosine reads 512 bytes a row. Search
//! keeps the [`candidates`] nearest by sketch and re-scores only those with
//! the exact cosine: the rows it returns carry their exact similarity, and
//! only which rows come back is approximate (recall@10 against the exact
//! scan: docs/benchmarks.md#vectors-at-scale).
//!
//! Unlike a graph index, the sketch is written with the vectors in one pass
//! (no build) and a changed row changes its own eight words only.

use rayon::prelude::*;

/// 64-bit words of a `dim`-bit sketch.
pub fn words(dim: usize) -> usize {
    dim.div_ceil(64)
}

/// Append the sketch of int8 `values` to `out`, as little-endian words.
pub fn push_signs(values: &[i8], out: &mut Vec<u8>) {
    for chunk in values.chunks(64) {
        out.extend_from_slice(&pack(chunk.iter().map(|v| *v > 0)).to_le_bytes());
    }
}

/// The sketch of a query vector, as words.
pub fn query_signs(query: &[f32]) -> Vec<u64> {
    query
        .chunks(64)
        .map(|chunk| pack(chunk.iter().map(|v| *v > 0.0)))
        .collect()
}

/// Up to 64 bits into one word, the first the lowest: written as a plain
/// loop over a chunk, which the compiler turns into a vector compare.
fn pack(bits: impl Iterator<Item = bool>) -> u64 {
    let mut word = 0u64;
    for (i, bit) in bits.enumerate() {
        word |= u64::from(bit) << i;
    }
    word
}

fn word(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes.try_into().expect("8 bytes"))
}

/// Up to `keep` rows that `passes` accepts, nearest `query` by the
/// Hamming distance of their sketches (`signs`: each row's words, in row
/// order), nearest first; rows at equal distance in row order.
///
/// Every distance is computed and counted (a pass over the sketches alone,
/// on every core past [`PARALLEL_ROWS`]); then the rows under the distance
/// that holds `keep` of them are gathered and sorted, and asked whether they
/// pass. A filter that turns rows away widens the distance and asks the next
/// rows, so `passes` — which may read a row's record — is asked about few rows.
pub fn candidates(signs: &[u8], query: &[u64], keep: usize, passes: impl Fn(usize) -> bool) -> Vec<usize> {
    let row_bytes = query.len() * 8;
    if row_bytes == 0 || keep == 0 {
        return vec![];
    }
    let rows = signs.len() / row_bytes;
    let parallel = rows > PARALLEL_ROWS;
    let mut distances = vec![0u16; rows];
    // How many rows lie at each distance, counted part by part as computed.
    let count = |(signs, out): (&[u8], &mut [u16])| {
        fill_distances(signs, query, out);
        let mut at = vec![0usize; row_bytes * 8 + 1];
        out.iter().for_each(|d| at[usize::from(*d)] += 1);
        at
    };
    let add = |mut a: Vec<usize>, b: Vec<usize>| {
        a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
        a
    };
    let none = || vec![0usize; row_bytes * 8 + 1];
    let (signs_parts, distance_parts) = (row_bytes * PART_ROWS, PART_ROWS);
    let mut within = match parallel {
        true => (signs
            .par_chunks(signs_parts)
            .zip(distances.par_chunks_mut(distance_parts)))
        .map(count)
        .reduce(none, add),
        false => (signs.chunks(signs_parts).zip(distances.chunks_mut(distance_parts)))
            .map(count)
            .fold(none(), add),
    };
    // How many rows lie at each distance or nearer.
    for d in 1..within.len() {
        within[d] += within[d - 1];
    }
    let mut kept = Vec::with_capacity(keep);
    let (mut wanted, mut done_below) = (keep, 0usize);
    while kept.len() < keep && done_below < within.len() {
        // The nearest distance holding `wanted` rows, or the farthest.
        let upto = within
            .iter()
            .position(|n| *n >= wanted)
            .unwrap_or(within.len() - 1)
            .max(done_below);
        let band = |(part, distances): (usize, &[u16])| -> Vec<(u16, usize)> {
            distances
                .iter()
                .enumerate()
                .filter(|(_, d)| (done_below..=upto).contains(&usize::from(**d)))
                .map(|(row, d)| (*d, part * PART_ROWS + row))
                .collect()
        };
        let mut next: Vec<(u16, usize)> = match parallel {
            true => distances
                .par_chunks(PART_ROWS)
                .enumerate()
                .flat_map_iter(band)
                .collect(),
            false => distances.chunks(PART_ROWS).enumerate().flat_map(band).collect(),
        };
        next.sort_unstable();
        kept.extend(
            next.into_iter()
                .map(|(_, row)| row)
                .filter(|row| passes(*row))
                .take(keep - kept.len()),
        );
        done_below = upto + 1;
        wanted = wanted.saturating_mul(2);
    }
    kept
}

/// Rows from which the distances are computed on every core: under it the
/// threads cost more than they save.
const PARALLEL_ROWS: usize = 65_536;
/// Rows per part of that work.
const PART_ROWS: usize = 8_192;

/// The Hamming distance of each row of `signs` to `query`, into `out`. The
/// count of set bits is one instruction where the CPU has it (nearly every
/// x86-64 since 2008), which the portable build may not assume: it is
/// chosen at run time.
fn fill_distances(signs: &[u8], query: &[u64], out: &mut [u16]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: this CPU has the instruction the function is compiled with.
        return unsafe { fill_distances_popcnt(signs, query, out) };
    }
    fill_distances_portable(signs, query, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn fill_distances_popcnt(signs: &[u8], query: &[u64], out: &mut [u16]) {
    fill_distances_portable(signs, query, out);
}

#[inline(always)]
fn fill_distances_portable(signs: &[u8], query: &[u64], out: &mut [u16]) {
    for (row, distance) in signs.chunks_exact(query.len() * 8).zip(out) {
        *distance = row
            .chunks_exact(8)
            .zip(query)
            .map(|(w, q)| (word(w) ^ q).count_ones() as u16)
            .sum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sketch(rows: &[Vec<i8>]) -> Vec<u8> {
        let mut out = vec![];
        rows.iter().for_each(|r| push_signs(r, &mut out));
        out
    }

    #[test]
    fn a_sketch_holds_one_bit_per_dimension_set_where_the_value_is_positive() {
        let mut out = vec![];
        push_signs(&[1, -1, 0, 5], &mut out);
        assert_eq!(out, vec![0b1001, 0, 0, 0, 0, 0, 0, 0]);
        let mut long = vec![];
        let values: Vec<i8> = (0..70).map(|i| if i == 65 { 3 } else { -1 }).collect();
        push_signs(&values, &mut long);
        assert_eq!(long.len(), 16, "70 dimensions take two words");
        assert_eq!(
            query_signs(&values.iter().map(|v| f32::from(*v)).collect::<Vec<_>>()),
            vec![0, 0b10]
        );
    }

    #[test]
    fn candidates_come_nearest_first_ties_in_row_order_and_only_rows_that_pass() {
        let rows = vec![
            vec![1, 1, 1, 1],    // distance 2 from the query
            vec![1, 1, -1, -1],  // 0
            vec![-1, -1, 1, 1],  // 4
            vec![1, -1, -1, -1], // 1
            vec![1, 1, -1, 1],   // 1
        ];
        let signs = sketch(&rows);
        let query = query_signs(&[0.5, 0.5, -0.5, -0.5]);
        assert_eq!(candidates(&signs, &query, 10, |_| true), vec![1, 3, 4, 0, 2]);
        assert_eq!(candidates(&signs, &query, 2, |_| true), vec![1, 3]);
        assert_eq!(candidates(&signs, &query, 2, |row| row != 1), vec![3, 4]);
        assert!(candidates(&signs, &query, 0, |_| true).is_empty());
    }
}
