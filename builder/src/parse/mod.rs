//! Parsers for the tool outputs captured next to every cubin, one module per tool output.
//! Each returns a typed [`ParseError`] on input it does not understand; none panics.

pub mod elf;
pub mod ptxas;
pub mod res_usage;
pub mod sass;

use std::fmt;

/// Which tool output a parser reads (named in errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// `nvcc -Xptxas -v` stderr.
    Ptxas,
    /// `cuobjdump -res-usage`.
    ResUsage,
    /// `cuobjdump -sass`.
    Sass,
    /// `cuobjdump -elf`.
    Elf,
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Tool::Ptxas => "ptxas -v output",
            Tool::ResUsage => "cuobjdump -res-usage output",
            Tool::Sass => "cuobjdump -sass output",
            Tool::Elf => "cuobjdump -elf output",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseError {
    /// Nothing to parse (the tool was not run, or printed nothing).
    Empty { tool: Tool },
    /// A line the parser does not understand (1-based line number).
    Unrecognized {
        tool: Tool,
        line: usize,
        text: String,
        expected: &'static str,
    },
    /// The output stops in the middle of a record.
    Truncated { tool: Tool, detail: String },
    /// The tool reported errors (`ptxas fatal`, `ptxas error`).
    ToolFailed { tool: Tool, messages: Vec<String> },
}

impl ParseError {
    pub fn tool(&self) -> Tool {
        match self {
            ParseError::Empty { tool }
            | ParseError::Unrecognized { tool, .. }
            | ParseError::Truncated { tool, .. }
            | ParseError::ToolFailed { tool, .. } => *tool,
        }
    }
}

/// Long lines are cut in messages so that one bad line does not flood a build log.
fn clip(s: &str) -> String {
    const MAX: usize = 160;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Empty { tool } => write!(f, "{tool} is empty"),
            ParseError::Unrecognized {
                tool,
                line,
                text,
                expected,
            } => {
                write!(
                    f,
                    "{tool}, line {line}: not understood: `{}` (expected {expected})",
                    clip(text)
                )
            }
            ParseError::Truncated { tool, detail } => write!(f, "{tool} is truncated: {detail}"),
            ParseError::ToolFailed { tool, messages } => {
                write!(f, "{tool} reports errors:")?;
                for m in messages {
                    write!(f, "\n  {}", clip(m))?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for ParseError {}

/// Parses a decimal or `0x` hexadecimal number as cuobjdump prints them.
pub(crate) fn number(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Like [`number`], for figures that must fit a `u32`.
pub(crate) fn number_u32(s: &str) -> Option<u32> {
    number(s).and_then(|v| u32::try_from(v).ok())
}

/// A compiled regex held in a `OnceLock` (patterns are constants, checked by tests).
macro_rules! static_regex {
    ($name:ident, $pattern:expr) => {
        fn $name() -> &'static regex::Regex {
            static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
            RE.get_or_init(|| regex::Regex::new($pattern).expect("constant regex"))
        }
    };
}
pub(crate) use static_regex;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_both_bases() {
        assert_eq!(number("0x1b8"), Some(440));
        assert_eq!(number("440"), Some(440));
        assert_eq!(number("0xzz"), None);
        assert_eq!(number_u32("0x1ffffffff"), None);
    }

    #[test]
    fn clipped_messages() {
        let e = ParseError::Unrecognized {
            tool: Tool::Sass,
            line: 3,
            text: "x".repeat(1000),
            expected: "an instruction",
        };
        let m = e.to_string();
        assert!(
            m.len() < 300 && m.contains("line 3") && m.contains("cuobjdump -sass"),
            "{m}"
        );
    }
}
