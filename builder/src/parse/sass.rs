//! `cuobjdump -sass`: functions and their instructions (address, predicate, opcode with
//! modifiers, operands). Encodings are read past and dropped.

use super::{number_u32, static_regex, ParseError, Tool};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Instruction {
    /// Byte offset from the start of the function.
    pub address: u32,
    /// `@P0`, `@!PT`, `@!UP1`.
    pub predicate: Option<String>,
    /// Opcode with its modifiers: `LDG.E.128.CONSTANT`.
    pub opcode: String,
    /// Operands as printed, without the trailing `;`.
    pub operands: String,
}

impl Instruction {
    /// The opcode without modifiers: `LDG` for `LDG.E.128.CONSTANT`.
    pub fn base_opcode(&self) -> &str {
        self.opcode.split('.').next().unwrap_or(&self.opcode)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SassFunction {
    /// Symbol (mangled for C++ names).
    pub name: String,
    pub instructions: Vec<Instruction>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SassListing {
    /// `code for sm_90`.
    pub arch: Option<String>,
    pub functions: Vec<SassFunction>,
}

impl SassListing {
    pub fn function(&self, name: &str) -> Option<&SassFunction> {
        self.functions.iter().find(|f| f.name == name)
    }
}

static_regex!(
    re_instruction,
    r"^\s*/\*(?P<addr>[0-9a-fA-F]+)\*/\s*(?P<text>[^;]*?)\s*;\s*(?:/\*\s*0x[0-9a-fA-F]+\s*\*/)?$"
);
static_regex!(re_encoding, r"^/\*\s*0x[0-9a-fA-F]+\s*\*/$");
static_regex!(re_function, r"^Function : (?P<name>\S+)$");
static_regex!(re_code_for, r"^code for (?P<arch>sm_\w+)$");
static_regex!(
    re_text,
    r"^(?:(?P<pred>@!?U?P(?:T|\d+))\s+)?(?P<op>[A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)(?:\s+(?P<rest>.*))?$"
);
// Lines around the code that carry nothing this parser needs.
static_regex!(
    re_ignorable,
    r"^(?:\.target\s+\S+|\.headerflags\s+.*|\.{3,}|Fatbin (?:elf|ptx) code:|=+|arch = \S+|code version = \[\d+,\d+\]|host = \S+|compile_size = \S+|identifier = .*)$"
);

pub fn parse(text: &str) -> Result<SassListing, ParseError> {
    if text.trim().is_empty() {
        return Err(ParseError::Empty { tool: Tool::Sass });
    }
    let mut out = SassListing::default();
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let line = raw.trim();
        let unrecognized = |expected: &'static str| ParseError::Unrecognized {
            tool: Tool::Sass,
            line: lineno,
            text: raw.to_string(),
            expected,
        };
        if line.is_empty() || re_encoding().is_match(line) || re_ignorable().is_match(line) {
            continue;
        }
        if let Some(c) = re_code_for().captures(line) {
            out.arch = Some(c["arch"].to_string());
            continue;
        }
        if let Some(c) = re_function().captures(line) {
            check_not_empty(&out)?;
            out.functions.push(SassFunction {
                name: c["name"].to_string(),
                instructions: Vec::new(),
            });
            continue;
        }
        let c = re_instruction()
            .captures(raw)
            .ok_or_else(|| unrecognized("`/*addr*/ OPCODE operands ;` or a listing header"))?;
        let address = u32::from_str_radix(&c["addr"], 16)
            .map_err(|_| unrecognized("an address that fits 32 bits"))?;
        let t = re_text()
            .captures(&c["text"])
            .ok_or_else(|| unrecognized("`[@pred] OPCODE operands`"))?;
        let f = out
            .functions
            .last_mut()
            .ok_or_else(|| unrecognized("a `Function : NAME` header before instructions"))?;
        f.instructions.push(Instruction {
            address,
            predicate: t.name("pred").map(|m| m.as_str().to_string()),
            opcode: t["op"].to_string(),
            operands: t.name("rest").map_or("", |m| m.as_str()).trim().to_string(),
        });
    }
    check_not_empty(&out)?;
    Ok(out)
}

fn check_not_empty(listing: &SassListing) -> Result<(), ParseError> {
    match listing.functions.last() {
        Some(f) if f.instructions.is_empty() => Err(ParseError::Truncated {
            tool: Tool::Sass,
            detail: format!("function `{}` has no instructions", f.name),
        }),
        _ => Ok(()),
    }
}

/// A branch operand as a byte address (`0x2c0`), if `operand` is one.
pub fn address_operand(operand: &str) -> Option<u32> {
    let o = operand.trim();
    o.strip_prefix("0x")
        .filter(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()))?;
    number_u32(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "
\tcode for sm_90
\t.target\tsm_90

\t\tFunction : copy_vec16
\t.headerflags\t@\"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)\"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                          /* 0x00000a00ff017b82 */
                                                                                   /* 0x000fe20000000800 */
        /*0130*/               @P0 BRA 0x2c0 ;                                     /* 0x0000000000600947 */
        /*01d0*/                   LDG.E.128.CONSTANT R4, desc[UR4][R4.64] ;       /* 0x0000000404047981 */
        /*02c0*/                   EXIT ;                                          /* 0x000000000000794d */
        /*02d0*/                   BRA 0x2d0;                                      /* 0xfffffffc00fc7947 */
        /*02e0*/                   NOP;                                            /* 0x0000000000007918 */
\t\t..........
";

    #[test]
    fn functions_and_instructions() {
        let l = parse(TEXT).unwrap();
        assert_eq!(l.arch.as_deref(), Some("sm_90"));
        let f = l.function("copy_vec16").unwrap();
        assert_eq!(f.instructions.len(), 6);
        let bra = &f.instructions[1];
        assert_eq!(
            (
                bra.address,
                bra.predicate.as_deref(),
                bra.opcode.as_str(),
                bra.operands.as_str()
            ),
            (0x130, Some("@P0"), "BRA", "0x2c0")
        );
        assert_eq!(f.instructions[2].base_opcode(), "LDG");
        assert_eq!(f.instructions[2].operands, "R4, desc[UR4][R4.64]");
        assert_eq!(f.instructions[3].operands, "");
        assert_eq!(f.instructions[5].opcode, "NOP");
    }

    #[test]
    fn errors() {
        assert_eq!(parse("\n\n"), Err(ParseError::Empty { tool: Tool::Sass }));
        let cut = &TEXT[..TEXT.find("        /*0000*/").unwrap()];
        assert!(matches!(parse(cut), Err(ParseError::Truncated { .. })));
        assert!(matches!(
            parse(&TEXT.replace("/*0130*/", "/*01z0*/")),
            Err(ParseError::Unrecognized { line: 9, .. })
        ));
        let orphan = "        /*0000*/  EXIT ;  /* 0x000000000000794d */\n";
        assert!(matches!(
            parse(orphan),
            Err(ParseError::Unrecognized { line: 1, .. })
        ));
    }

    #[test]
    fn address_operands() {
        assert_eq!(address_operand(" 0x2c0"), Some(0x2c0));
        assert_eq!(address_operand("R2"), None);
        assert_eq!(address_operand("0x"), None);
        assert_eq!(address_operand("-0x10"), None);
    }
}
