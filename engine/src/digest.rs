//! SHA-256 digests as the files and lines of a run spell them: lower-case hex.

/// `bytes` as lower-case hex, two digits a byte.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        // Writing to a String cannot fail.
        let _ = write!(out, "{byte:02x}");
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn two_lower_case_digits_a_byte() {
        assert_eq!(super::hex(&[0, 0x0f, 0xab, 0xff]), "000fabff");
    }
}
