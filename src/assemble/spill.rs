//! The bulky part of each entry (its catalog object and findings lines),
//! set aside in a staged file while a build goes on, so that memory holds
//! only what the end of assembling reads of every entry (path, name,
//! counts, document range).
//!
//! A cold build of 61,452 skills held 161 MB of entries at the end of its
//! parse stage; the catalog and findings are most of it, and they are read once
//! more, bucket by bucket, when the buckets are encoded.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use agentfinder_skills_reader::contract::parts::PartEntry;

/// Where one entry's set-aside text is in the file.
#[derive(Debug, Clone, Copy)]
struct Place {
    offset: u64,
    /// Bytes of the catalog object; `None` for an entry without one.
    catalog: Option<u32>,
    /// Bytes of the findings lines; `None` once they are held in memory
    /// again (changed after being set aside).
    findings: Option<u32>,
}

/// Entries' catalog objects and findings lines, in a file beside the pack.
pub(super) struct EntrySpill {
    path: PathBuf,
    writer: Option<BufWriter<File>>,
    written: u64,
    /// By entry number.
    places: Vec<Place>,
}

/// Reads what an [`EntrySpill`] set aside.
pub(super) struct SpillReader<'a> {
    file: File,
    places: &'a [Place],
}

impl EntrySpill {
    /// An empty spill file in `dir`.
    pub fn create(dir: &Path) -> std::io::Result<Self> {
        let path = dir.join("entries.spill");
        let writer = BufWriter::with_capacity(1 << 20, File::create(&path)?);
        Ok(Self {
            path,
            writer: Some(writer),
            written: 0,
            places: Vec::new(),
        })
    }

    /// Moves `entry`'s catalog and findings to the file; `entry` is the
    /// next entry (numbered as they come).
    pub fn set_aside(&mut self, entry: &mut PartEntry) -> std::io::Result<()> {
        let writer = self
            .writer
            .as_mut()
            .ok_or_else(|| std::io::Error::other("the entry spill is closed"))?;
        let catalog = entry.catalog.take();
        let findings = std::mem::take(&mut entry.findings);
        let too_long = |_| std::io::Error::other("an entry's text is over 4 GB");
        let place = Place {
            offset: self.written,
            catalog: catalog
                .as_ref()
                .map(|c| u32::try_from(c.len()).map_err(too_long))
                .transpose()?,
            findings: Some(u32::try_from(findings.len()).map_err(too_long)?),
        };
        for text in [catalog.as_deref().unwrap_or_default(), findings.as_str()] {
            writer.write_all(text.as_bytes())?;
            self.written += text.len() as u64;
        }
        self.places.push(place);
        Ok(())
    }

    /// Marks entry `number`'s findings as held in memory from now on.
    pub fn findings_in_memory(&mut self, number: usize) {
        if let Some(place) = self.places.get_mut(number) {
            place.findings = None;
        }
    }

    /// Ends writing; what was set aside can be read back.
    pub fn reader(&mut self) -> std::io::Result<SpillReader<'_>> {
        if let Some(writer) = self.writer.take() {
            // Flushed for this process to read back; never synced to disk.
            writer.into_inner().map_err(|e| e.into_error())?;
        }
        Ok(SpillReader {
            file: File::open(&self.path)?,
            places: &self.places,
        })
    }
}

impl SpillReader<'_> {
    fn read(&mut self, offset: u64, length: u32) -> std::io::Result<String> {
        let mut bytes = vec![0; length as usize];
        self.file.seek(SeekFrom::Start(offset))?;
        self.file.read_exact(&mut bytes)?;
        String::from_utf8(bytes).map_err(std::io::Error::other)
    }

    /// Entry `number`'s findings lines, when they are set aside.
    pub fn findings(&mut self, number: usize) -> std::io::Result<Option<String>> {
        let Some(place) = self.places.get(number).copied() else {
            return Ok(None);
        };
        let Some(length) = place.findings else {
            return Ok(None);
        };
        let offset = place.offset + u64::from(place.catalog.unwrap_or(0));
        self.read(offset, length).map(Some)
    }

    /// `entry` (entry `number`) with what was set aside put back.
    pub fn complete(&mut self, number: usize, entry: &PartEntry) -> std::io::Result<PartEntry> {
        let mut whole = entry.clone();
        let Some(place) = self.places.get(number).copied() else {
            return Ok(whole);
        };
        if let Some(length) = place.catalog {
            whole.catalog = Some(self.read(place.offset, length)?);
        }
        if let Some(findings) = self.findings(number)? {
            whole.findings = findings;
        }
        Ok(whole)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str, catalog: Option<&str>, findings: &str) -> PartEntry {
        PartEntry {
            path: path.into(),
            key: "k".into(),
            blob: None,
            commit: "c".into(),
            changed_at: None,
            changed_at_or_before: false,
            documents: None,
            document_count: 1,
            skill_count: 1,
            name: Some(path.into()),
            catalog: catalog.map(str::to_string),
            findings: findings.into(),
        }
    }

    #[test]
    fn entries_set_aside_come_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let mut spill = EntrySpill::create(dir.path()).unwrap();
        let originals = [
            entry("a/SKILL.md", Some("{\"name\":\"é\"}"), "{\"w\":1}\n"),
            entry("b/SKILL.md", None, ""),
            entry("c/SKILL.md", Some("{}"), "{\"w\":2}\n{\"w\":3}\n"),
        ];
        let mut hollow = Vec::new();
        for original in &originals {
            let mut held = original.clone();
            spill.set_aside(&mut held).unwrap();
            assert_eq!(
                (held.catalog.as_deref(), held.findings.as_str()),
                (None, "")
            );
            hollow.push(held);
        }
        // Findings changed after being set aside are the ones in memory.
        hollow[2].findings = "{\"w\":4}\n".into();
        spill.findings_in_memory(2);
        let mut reader = spill.reader().unwrap();
        assert_eq!(reader.complete(0, &hollow[0]).unwrap(), originals[0]);
        assert_eq!(reader.complete(1, &hollow[1]).unwrap(), originals[1]);
        let third = reader.complete(2, &hollow[2]).unwrap();
        assert_eq!(third.catalog.as_deref(), Some("{}"));
        assert_eq!(third.findings, "{\"w\":4}\n");
        assert_eq!(reader.findings(0).unwrap().as_deref(), Some("{\"w\":1}\n"));
        assert_eq!(reader.findings(2).unwrap(), None);
    }
}
