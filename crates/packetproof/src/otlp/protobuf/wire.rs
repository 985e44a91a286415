//! The protobuf wire format, read in place: a message's fields one at a time, each value
//! checked against the wire type its field declares, a length never trusted past the
//! bytes that follow it, unknown fields skipped (groups included) and nesting bounded.
//! Whatever it refuses, it says what and at which byte of the export.

/// How deep messages nest: as deep as prost's generated types allow (their recursion
/// limit), so an export the OpenTelemetry project's types accept is accepted here.
pub(crate) const LIMIT: u32 = 100;

pub(crate) const VARINT: u8 = 0;
pub(crate) const I64: u8 = 1;
pub(crate) const LEN: u8 = 2;
const START_GROUP: u8 = 3;
const END_GROUP: u8 = 4;
pub(crate) const I32: u8 = 5;

/// Why the bytes are no message: what, and where (a byte offset in the export).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Broken {
    pub(crate) at: usize,
    pub(crate) what: String,
}

/// The fields of one message: its bytes, and where they start in the export.
#[derive(Clone)]
pub(crate) struct Fields<'a> {
    bytes: &'a [u8],
    pos: usize,
    base: usize,
    /// Where the last key read starts.
    key_at: usize,
}

fn wire_name(wire: u8) -> &'static str {
    match wire {
        VARINT => "a varint",
        I64 => "a 64-bit value",
        LEN => "a length-delimited value",
        START_GROUP => "a group",
        END_GROUP => "a group's end",
        _ => "a 32-bit value",
    }
}

impl<'a> Fields<'a> {
    /// The fields of `bytes`, which start at byte `base` of the export.
    pub(crate) fn new(bytes: &'a [u8], base: usize) -> Fields<'a> {
        Fields { bytes, pos: 0, base, key_at: 0 }
    }

    fn broken(&self, at: usize, what: String) -> Broken {
        Broken { at: self.base + at, what }
    }

    fn varint_at(&mut self) -> Result<u64, Broken> {
        let start = self.pos;
        let mut value = 0u64;
        for i in 0..10 {
            let Some(&byte) = self.bytes.get(start + i) else {
                return Err(self.broken(start, "a varint cut short by the end of its message".into()));
            };
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte < 0x80 {
                // The tenth byte holds a 64-bit value's last bit, no more.
                if i == 9 && byte > 1 {
                    break;
                }
                self.pos = start + i + 1;
                return Ok(value);
            }
        }
        Err(self.broken(start, "a varint past 64 bits".into()))
    }

    /// The next field's number and wire type; `None` at the message's end.
    pub(crate) fn next(&mut self) -> Option<Result<(u32, u8), Broken>> {
        (self.pos < self.bytes.len()).then(|| self.key())
    }

    fn key(&mut self) -> Result<(u32, u8), Broken> {
        let start = self.pos;
        self.key_at = start;
        let key = self.varint_at()?;
        let Ok(key) = u32::try_from(key) else {
            return Err(self.broken(start, format!("a field key of {key}, past 32 bits")));
        };
        let wire = (key & 7) as u8;
        if wire > I32 {
            return Err(self.broken(start, format!("wire type {wire}, which protobuf does not have")));
        }
        if key >> 3 == 0 {
            return Err(self.broken(start, "field number 0".into()));
        }
        Ok((key >> 3, wire))
    }

    fn expect(&self, wire: u8, want: u8, field: &str) -> Result<(), Broken> {
        if wire == want {
            return Ok(());
        }
        Err(self.broken(self.key_at, format!("{field} as {}: it is {}", wire_name(wire), wire_name(want))))
    }

    fn take(&mut self, n: u64, field: &str) -> Result<(&'a [u8], usize), Broken> {
        let left = self.bytes.len() - self.pos;
        if n > left as u64 {
            return Err(self.broken(self.pos, format!("{field} of {n} bytes, where {left} remain")));
        }
        let start = self.pos;
        self.pos += n as usize;
        Ok((&self.bytes[start..self.pos], self.base + start))
    }

    pub(crate) fn varint(&mut self, wire: u8, field: &str) -> Result<u64, Broken> {
        self.expect(wire, VARINT, field)?;
        self.varint_at()
    }

    pub(crate) fn fixed64(&mut self, wire: u8, field: &str) -> Result<u64, Broken> {
        self.expect(wire, I64, field)?;
        let (bytes, _) = self.take(8, field)?;
        Ok(u64::from_le_bytes(bytes.try_into().unwrap_or_default()))
    }

    pub(crate) fn fixed32(&mut self, wire: u8, field: &str) -> Result<u32, Broken> {
        self.expect(wire, I32, field)?;
        let (bytes, _) = self.take(4, field)?;
        Ok(u32::from_le_bytes(bytes.try_into().unwrap_or_default()))
    }

    pub(crate) fn bytes(&mut self, wire: u8, field: &str) -> Result<&'a [u8], Broken> {
        self.expect(wire, LEN, field)?;
        let n = self.varint_at()?;
        Ok(self.take(n, field)?.0)
    }

    /// A string field: its bytes, which must be UTF-8.
    pub(crate) fn string(&mut self, wire: u8, field: &str) -> Result<&'a str, Broken> {
        self.expect(wire, LEN, field)?;
        let n = self.varint_at()?;
        let (bytes, at) = self.take(n, field)?;
        std::str::from_utf8(bytes).map_err(|e| Broken {
            at: at + e.valid_up_to(),
            what: format!("{field} is not UTF-8 (a protobuf string must be)"),
        })
    }

    /// A message field, in a message that may nest `depth` more levels: its own fields.
    pub(crate) fn message(&mut self, wire: u8, field: &str, depth: u32) -> Result<Fields<'a>, Broken> {
        self.expect(wire, LEN, field)?;
        if depth == 0 {
            return Err(self.broken(self.pos, format!("{field} nested deeper than {LIMIT} messages")));
        }
        let n = self.varint_at()?;
        let (bytes, base) = self.take(n, field)?;
        Ok(Fields::new(bytes, base))
    }

    /// Skip a field this reader does not read (a group with what it holds), in a message
    /// that may nest `depth` more levels.
    pub(crate) fn skip(&mut self, number: u32, wire: u8, depth: u32) -> Result<(), Broken> {
        if depth == 0 {
            return Err(self.broken(self.pos, format!("field {number} nested deeper than {LIMIT} messages")));
        }
        let field = format!("field {number}");
        match wire {
            VARINT => self.varint_at().map(drop),
            I64 => self.take(8, &field).map(drop),
            I32 => self.take(4, &field).map(drop),
            LEN => {
                let n = self.varint_at()?;
                self.take(n, &field).map(drop)
            }
            START_GROUP => loop {
                let start = self.pos;
                let (inner, inner_wire) = self.key()?;
                if inner_wire == END_GROUP {
                    if inner != number {
                        let what = format!("the end of group {inner} in group {number}");
                        return Err(self.broken(start, what));
                    }
                    return Ok(());
                }
                self.skip(inner, inner_wire, depth - 1)?;
            },
            _ => Err(self.broken(self.key_at, format!("the end of group {number}, which is not open"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_keys_and_lengths_are_read_within_their_bytes() {
        let mut f = Fields::new(&[0x96, 0x01], 0);
        assert_eq!(f.varint(VARINT, "v"), Ok(150));
        let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(Fields::new(&max, 0).varint(VARINT, "v"), Ok(u64::MAX));
        let past = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02];
        assert!(Fields::new(&past, 0).varint(VARINT, "v").unwrap_err().what.contains("past 64 bits"));
        assert!(
            Fields::new(&[0x80], 3).varint(VARINT, "v").unwrap_err()
                == Broken { at: 3, what: "a varint cut short by the end of its message".into() }
        );
        assert_eq!(Fields::new(&[0x00], 0).next(), Some(Err(Broken { at: 0, what: "field number 0".into() })));
        assert!(Fields::new(&[0x0f], 0).next().unwrap().unwrap_err().what.contains("wire type 7"));
        let err = Fields::new(&[0x05, b'a'], 10).bytes(LEN, "Span.name").unwrap_err();
        assert_eq!(err, Broken { at: 11, what: "Span.name of 5 bytes, where 1 remain".into() });
        let mut f = Fields::new(&[0x0a, 0x01, 0xff], 0);
        let (_, wire) = f.next().unwrap().unwrap();
        assert!(f.string(wire, "Span.name").unwrap_err().what.contains("not UTF-8"));
    }

    #[test]
    fn groups_are_skipped_whole_and_an_unopened_end_is_refused() {
        // field 2 as a group holding a varint field 1, then its end
        let mut f = Fields::new(&[0x13, 0x08, 0x01, 0x14, 0x18, 0x07], 0);
        let (number, wire) = f.next().unwrap().unwrap();
        f.skip(number, wire, LIMIT).unwrap();
        assert_eq!(f.next().unwrap().unwrap(), (3, VARINT));
        let mut f = Fields::new(&[0x14], 0);
        let (number, wire) = f.next().unwrap().unwrap();
        assert!(f.skip(number, wire, LIMIT).unwrap_err().what.contains("not open"));
        let mut f = Fields::new(&[0x13, 0x1c], 0);
        let (number, wire) = f.next().unwrap().unwrap();
        assert!(f.skip(number, wire, LIMIT).unwrap_err().what.contains("the end of group 3 in group 2"));
        let mut f = Fields::new(&[0x08, 0x01], 0);
        let (number, wire) = f.next().unwrap().unwrap();
        assert!(f.skip(number, wire, 0).unwrap_err().what.contains("deeper than 100"));
    }
}
