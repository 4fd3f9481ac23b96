use proptest::prelude::*;

use super::*;

fn chunk(text: &str) -> Vec<Chunk> {
    chunk_body(text, 0, &ChunkOptions::default()).chunks
}

fn small(max: usize, overlap: usize) -> ChunkOptions {
    ChunkOptions {
        max_chars: max,
        overlap_chars: overlap,
    }
}

fn titles(chunks: &[Chunk]) -> Vec<Option<&str>> {
    chunks.iter().map(|c| c.heading.as_deref()).collect()
}

#[test]
fn atx_and_setext_headings_open_sections_with_ancestry() {
    let text = "intro\n\n# Top\n\nbody\n\nSub\n---\n\nmore\n\n### Deep\n\nx\n\nOther\n=====\ny\n";
    let chunks = chunk(text);
    assert_eq!(
        titles(&chunks),
        [None, Some("Top"), Some("Sub"), Some("Deep"), Some("Other")]
    );
    assert_eq!(chunks[0].content, "intro");
    assert_eq!(chunks[2].heading_path, ["Top", "Sub"]);
    assert_eq!(chunks[2].content, "Sub\n---\n\nmore");
    assert_eq!(chunks[3].heading_path, ["Top", "Sub", "Deep"]);
    assert_eq!(chunks[4].heading_path, ["Other"]);
    assert_eq!(
        chunks.iter().map(|c| c.ordinal).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4]
    );
    assert_eq!((chunks[1].line_start, chunks[1].line_end), (3, 5));
}

#[test]
fn hash_lines_inside_fences_are_code_not_headings() {
    for fence in ["```", "~~~"] {
        let text = format!("# Real\n\n{fence}bash\n# not a heading\nls\n{fence}\n\n## Next\n");
        let chunks = chunk(&text);
        assert_eq!(titles(&chunks), [Some("Real"), Some("Next")], "{fence}");
        assert!(chunks[0].content.contains("# not a heading"));
    }
}

#[test]
fn an_unclosed_fence_swallows_the_rest_of_the_file() {
    let text = "# A\n\n```\n# inside\n\n## also inside\n";
    let chunks = chunk(text);
    assert_eq!(titles(&chunks), [Some("A")]);
    assert!(chunks[0].content.ends_with("## also inside"));
}

#[test]
fn skipped_levels_and_duplicate_titles() {
    let text = "# A\n#### Deep\n## Usage\ntext\n# B\n## Usage\ntext\n";
    let chunks = chunk(text);
    assert_eq!(chunks[1].heading_path, ["A", "Deep"]);
    assert_eq!(chunks[2].heading_path, ["A", "Usage"]);
    assert_eq!(chunks[4].heading_path, ["B", "Usage"]);
    assert_eq!(chunks[2].anchor.as_deref(), Some("usage"));
    assert_eq!(chunks[4].anchor.as_deref(), Some("usage-1"));
}

#[test]
fn no_headings_is_one_section() {
    let chunks = chunk("just text\n\nand more\n");
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].heading, None);
    assert!(chunks[0].heading_path.is_empty());
    assert_eq!(chunks[0].content, "just text\n\nand more");
}

#[test]
fn body_offset_skips_frontmatter_and_keeps_file_lines() {
    let text = "---\nname: x\n---\n# Title\nbody\n";
    let body_start = text.find("# Title").unwrap();
    let chunks = chunk_body(text, body_start, &ChunkOptions::default()).chunks;
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].line_start, 4);
    assert_eq!(chunks[0].line_end, 5);
}

#[test]
fn crlf_and_non_ascii() {
    let text = "# Über café\r\n\r\nnaïve text — ok\r\n\r\n## 日本語\r\n本文\r\n";
    let chunks = chunk(text);
    assert_eq!(titles(&chunks), [Some("Über café"), Some("日本語")]);
    assert_eq!(chunks[0].content, "# Über café\r\n\r\nnaïve text — ok");
    assert_eq!(chunks[1].anchor.as_deref(), Some("日本語"));
}

#[test]
fn long_sections_split_at_blocks_with_overlap() {
    let paragraph = |i: usize| format!("Paragraph {i} {}\n\n", "word ".repeat(30));
    let mut text = String::from("# Long\n\n");
    for i in 0..40 {
        text.push_str(&paragraph(i));
    }
    let options = small(1000, 200);
    let chunks = chunk_body(&text, 0, &options).chunks;
    assert!(chunks.len() > 5, "{}", chunks.len());
    for (i, c) in chunks.iter().enumerate() {
        assert!(c.content.chars().count() <= 1000, "chunk {i} too long");
        assert_eq!(c.part as usize, i);
        assert_eq!(c.parts as usize, chunks.len());
        assert_eq!(c.heading_path, ["Long"]);
    }
    // Each later part starts inside the previous part: the overlap.
    for pair in chunks.windows(2) {
        assert!(pair[1].bytes.start < pair[0].bytes.end, "no overlap");
        assert!(pair[0].bytes.end - pair[1].bytes.start <= 200 * 4);
    }
    // Parts break between paragraphs, not inside them.
    for c in &chunks[..chunks.len() - 1] {
        assert!(
            c.content.ends_with("word"),
            "{:?}",
            &c.content[c.content.len() - 20..]
        );
    }
}

#[test]
fn code_blocks_split_by_lines_only_when_too_long_alone() {
    let fits = format!("```\n{}```\n", "line of code\n".repeat(60));
    let text = format!(
        "# S\n\n{}\n{fits}\n{}\n",
        "intro ".repeat(100),
        "outro ".repeat(100)
    );
    let chunks = chunk_body(&text, 0, &small(1000, 100)).chunks;
    assert!(chunks.len() >= 2);
    assert!(
        chunks.iter().any(|c| c.content.contains(fits.trim_end())),
        "a code block that fits must stay whole"
    );

    let huge = format!("# S\n\n```\n{}```\n", "line of code\n".repeat(500));
    let chunks = chunk_body(&huge, 0, &small(1000, 100)).chunks;
    assert!(chunks.len() > 5);
    assert!(chunks.iter().all(|c| c.content.chars().count() <= 1000));
}

#[test]
fn a_single_overlong_line_is_the_only_oversized_chunk() {
    let text = format!("# S\n\nshort\n\n{}\n\nafter\n", "x".repeat(5000));
    let chunks = chunk_body(&text, 0, &small(1000, 100)).chunks;
    let oversized: Vec<_> = chunks
        .iter()
        .filter(|c| c.content.chars().count() > 1000)
        .collect();
    assert_eq!(oversized.len(), 1);
    assert_eq!(oversized[0].content, "x".repeat(5000));
}

#[test]
fn lists_split_between_items() {
    let mut text = String::from("# L\n\n");
    for i in 0..100 {
        text.push_str(&format!("- item {i} {}\n", "text ".repeat(10)));
    }
    let chunks = chunk_body(&text, 0, &small(800, 100)).chunks;
    assert!(chunks.len() > 3);
    for c in &chunks[1..] {
        let first_line = c.content.lines().next().unwrap();
        assert!(first_line.starts_with("- item"), "{first_line}");
    }
}

#[test]
fn hostile_nesting_falls_back_to_plain_lines() {
    let text = format!("# T\n\n{}deep\n", "> ".repeat(20_000));
    let body = chunk_body(&text, 0, &ChunkOptions::default());
    assert!(body.fallback.is_some());
    assert!(body.chunks.iter().any(|c| c.content.contains("deep")));

    let brackets = format!("{}x{}", "[".repeat(50_000), "]".repeat(10));
    let body = chunk_body(&brackets, 0, &ChunkOptions::default());
    assert!(body.fallback.is_some());
    let covered: usize = body.chunks.iter().map(|c| c.content.len()).sum();
    assert!(covered >= brackets.len());
}

#[test]
fn ordinary_markdown_passes_the_prescreen() {
    let text = "- a\n  - b\n    - c\n\n> quote\n> > nested\n\n[link](http://x.y/(z)) `Vec<Vec<u8>>` **bold** _it_\n\n---\n\n----------------------------------------------------------------\n";
    assert_eq!(prescreen(text, &PARSER_LIMITS), Ok(()));
    let code = format!(
        "```python\n{}```\n",
        "def __init__(self, **kwargs): pass\n".repeat(3000)
    );
    assert_eq!(prescreen(&code, &PARSER_LIMITS), Ok(()));
}

#[test]
fn slow_inputs_are_refused_by_the_prescreen() {
    for (name, text) in [
        ("emphasis", "*_".repeat(20_000)),
        (
            "table",
            format!("| a | b |\n|---|---|\n{}", "| x | y |\n".repeat(20_000)),
        ),
        ("body", "para\n\n".repeat(200_000)),
    ] {
        let body = chunk_body(&text, 0, &ChunkOptions::default());
        assert!(body.fallback.is_some(), "{name}");
        assert!(!body.chunks.is_empty(), "{name}");
    }
}

fn markdownish() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        3 => "[a-zé ]{0,60}",
        1 => "#{1,6} [A-Za-z ]{0,20}",
        1 => Just("```".to_string()),
        1 => Just("~~~".to_string()),
        1 => Just("---".to_string()),
        1 => Just("===".to_string()),
        1 => "- [a-z ]{0,30}",
        1 => "> [a-z ]{0,30}",
        1 => "\\| [a-z]{1,5} \\| [a-z]{1,5} \\|",
        1 => Just(String::new()),
        1 => "x{100,400}",
    ];
    (prop::collection::vec(line, 0..80), prop::bool::ANY)
        .prop_map(|(lines, crlf)| lines.join(if crlf { "\r\n" } else { "\n" }))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn every_body_byte_is_covered_and_chunks_respect_the_limit(text in markdownish()) {
        let options = small(300, 60);
        let body = chunk_body(&text, 0, &options);
        let mut covered = vec![false; text.len()];
        for c in &body.chunks {
            prop_assert_eq!(&text[c.bytes.clone()], c.content.as_str());
            prop_assert!(!c.content.trim().is_empty());
            for b in c.bytes.clone() {
                covered[b] = true;
            }
            if c.content.chars().count() > options.max_chars {
                // Only a single line longer than the limit may do that.
                let longest = c.content.lines().map(|l| l.chars().count()).max().unwrap_or(0);
                prop_assert!(longest > options.max_chars - options.overlap_chars.min(options.max_chars / 2),
                    "oversized chunk without an overlong line: {:?}", c.content);
                prop_assert_eq!(c.content.lines().filter(|l| !l.trim().is_empty()).count(), 1);
            }
        }
        for (i, byte) in text.bytes().enumerate() {
            prop_assert!(covered[i] || byte.is_ascii_whitespace(), "byte {} ({:?}) not covered", i, byte as char);
        }
    }
}

#[test]
fn a_parser_panic_costs_the_structure_not_the_text() {
    // Found by the property test: markdown-rs 1.0.0 panics on this input.
    let text = "a\n---\n---\na\n---";
    let body = chunk_body(text, 0, &ChunkOptions::default());
    let joined: String = body.chunks.iter().map(|c| c.content.as_str()).collect();
    assert_eq!(joined.matches('a').count(), 2);
}
