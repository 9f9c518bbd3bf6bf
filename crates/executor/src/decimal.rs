//! Numbers as decimal text without allocating: the guard and the marker scan run where no
//! allocation may happen.

/// The decimal digits of a number, formatted on the stack (no allocation).
pub(crate) struct Decimal {
    digits: [u8; 10],
    start: usize,
}

impl Decimal {
    pub(crate) fn new(mut n: u32) -> Self {
        let mut digits = [0u8; 10];
        let mut start = digits.len();
        loop {
            start -= 1;
            digits[start] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                return Self { digits, start };
            }
        }
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.digits[self.start..]
    }
}
