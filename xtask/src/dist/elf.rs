//! The newest glibc symbol version an ELF executable needs, read from its version-needs section
//! (`SHT_GNU_verneed`): it decides the wheel's `manylinux_2_NN` tag and what the docs promise.

use anyhow::{Context as _, bail};

const SHT_GNU_VERNEED: u32 = 0x6fff_fffe;

/// `(major, minor)` of the newest `GLIBC_x.y` the file at `bytes` needs; `None` for a binary that
/// needs no glibc version (static, or linked against another libc).
pub fn newest_glibc(bytes: &[u8]) -> anyhow::Result<Option<(u32, u32)>> {
    let elf = Elf64::new(bytes)?;
    let mut newest = None;
    for section in 0..elf.section_count()? {
        if elf.section_type(section)? != SHT_GNU_VERNEED {
            continue;
        }
        let strings = elf.section_range(elf.section_link(section)?)?;
        for name in elf.verneed_names(section)? {
            let name = cstr_at(&bytes[strings.clone()], name)?;
            if let Some(version) = glibc_version(name) {
                newest = newest.max(Some(version));
            }
        }
    }
    Ok(newest)
}

fn glibc_version(name: &[u8]) -> Option<(u32, u32)> {
    let rest = std::str::from_utf8(name.strip_prefix(b"GLIBC_")?).ok()?;
    let mut parts = rest.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().map_or(Some(0), |m| m.parse().ok())?;
    Some((major, minor))
}

fn cstr_at(table: &[u8], offset: usize) -> anyhow::Result<&[u8]> {
    let rest = table.get(offset..).context("string offset outside its table")?;
    let end = rest.iter().position(|&b| b == 0).context("unterminated string")?;
    Ok(&rest[..end])
}

/// A little-endian 64-bit ELF file, read field by field with bounds checks.
struct Elf64<'a> {
    bytes: &'a [u8],
}

impl<'a> Elf64<'a> {
    fn new(bytes: &'a [u8]) -> anyhow::Result<Self> {
        if bytes.len() < 64 || &bytes[..4] != b"\x7fELF" {
            bail!("not an ELF file");
        }
        if bytes[4] != 2 || bytes[5] != 1 {
            bail!("not a little-endian 64-bit ELF file");
        }
        Ok(Self { bytes })
    }

    fn u16_at(&self, at: usize) -> anyhow::Result<u16> {
        let b = self.bytes.get(at..at + 2).context("ELF read out of bounds")?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32_at(&self, at: usize) -> anyhow::Result<u32> {
        let b = self.bytes.get(at..at + 4).context("ELF read out of bounds")?;
        Ok(u32::from_le_bytes(b.try_into()?))
    }

    fn u64_at(&self, at: usize) -> anyhow::Result<usize> {
        let b = self.bytes.get(at..at + 8).context("ELF read out of bounds")?;
        Ok(usize::try_from(u64::from_le_bytes(b.try_into()?))?)
    }

    fn section_count(&self) -> anyhow::Result<usize> {
        Ok(usize::from(self.u16_at(0x3c)?))
    }

    fn section_header(&self, index: usize) -> anyhow::Result<usize> {
        let table = self.u64_at(0x28)?;
        let size = usize::from(self.u16_at(0x3a)?);
        Ok(table + index * size)
    }

    fn section_type(&self, index: usize) -> anyhow::Result<u32> {
        self.u32_at(self.section_header(index)? + 4)
    }

    fn section_link(&self, index: usize) -> anyhow::Result<usize> {
        Ok(self.u32_at(self.section_header(index)? + 0x28)? as usize)
    }

    fn section_range(&self, index: usize) -> anyhow::Result<std::ops::Range<usize>> {
        let header = self.section_header(index)?;
        let (offset, size) = (self.u64_at(header + 0x18)?, self.u64_at(header + 0x20)?);
        if offset.checked_add(size).is_none_or(|end| end > self.bytes.len()) {
            bail!("section {index} lies outside the file");
        }
        Ok(offset..offset + size)
    }

    /// The string-table offsets of every version name a `SHT_GNU_verneed` section asks for
    /// (`Elf64_Verneed` entries, each with its chain of `Elf64_Vernaux`).
    fn verneed_names(&self, index: usize) -> anyhow::Result<Vec<usize>> {
        let range = self.section_range(index)?;
        let mut names = Vec::new();
        let mut need = range.start;
        // A malformed chain could loop; no real file needs more entries than the section has bytes.
        for _ in 0..range.len() {
            let aux_count = self.u16_at(need + 2)?;
            let mut aux = need + self.u32_at(need + 8)? as usize;
            for _ in 0..aux_count {
                names.push(self.u32_at(aux + 8)? as usize);
                let next = self.u32_at(aux + 12)? as usize;
                if next == 0 {
                    break;
                }
                aux += next;
            }
            let next = self.u32_at(need + 12)? as usize;
            if next == 0 {
                break;
            }
            need += next;
        }
        Ok(names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_names_parse() {
        assert_eq!(glibc_version(b"GLIBC_2.34"), Some((2, 34)));
        assert_eq!(glibc_version(b"GLIBC_2.2.5"), Some((2, 2)));
        assert_eq!(glibc_version(b"GLIBC_PRIVATE"), None);
        assert_eq!(glibc_version(b"GCC_3.0"), None);
    }

    #[test]
    fn a_system_program_needs_some_glibc_and_garbage_is_an_error() {
        let ls = std::fs::read("/bin/ls").unwrap();
        let (major, minor) = newest_glibc(&ls).unwrap().expect("ls needs glibc");
        assert_eq!(major, 2);
        assert!(minor >= 2, "{minor}");
        assert!(newest_glibc(b"#!/bin/sh\necho hi\n").is_err());
        let mut truncated = ls[..200].to_vec();
        truncated.extend_from_slice(&[0xff; 64]);
        assert!(newest_glibc(&truncated).is_err());
    }
}
