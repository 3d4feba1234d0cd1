//! `cuobjdump -elf`: the section table, the symbol table (entry points, and the
//! `$kernel$helper` symbols of device functions cloned into a kernel), and each
//! `.nv.info.<kernel>` section's attributes: the parameter table (`EIATTR_KPARAM_INFO`),
//! `__launch_bounds__` (`EIATTR_MAX_THREADS`), the register limit (`EIATTR_MAXREG_COUNT`).
//!
//! Sections this module has no use for (constant banks, code bytes, debug info, the
//! embedded PTX) are skipped whole; the ones it reads are parsed strictly.

use super::{number, number_u32, static_regex, ParseError, Tool};
use crate::model::ParamSlot;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Symbol {
    pub name: String,
    /// Offset within its section (for functions: from the start of the section's code).
    pub value: u64,
    pub size: u64,
    pub info: u32,
    pub other: u32,
    /// Index of the section the symbol lives in.
    pub section: u32,
}

/// `STT_FUNC` in the low nibble of `st_info`.
const STT_FUNC: u32 = 2;
/// `STO_CUDA_ENTRY`: the symbol is a kernel entry point.
const STO_CUDA_ENTRY: u32 = 0x10;

impl Symbol {
    pub fn is_function(&self) -> bool {
        self.info & 0xf == STT_FUNC
    }

    pub fn is_entry(&self) -> bool {
        self.is_function() && self.other & STO_CUDA_ENTRY != 0
    }

    /// `("kernel", "helper")` for `$kernel$helper`: a device function cloned into a kernel's
    /// code section (whole-program compilation), i.e. a call edge kernel -> helper.
    pub fn clone_of(&self) -> Option<(&str, &str)> {
        let rest = self.name.strip_prefix('$')?;
        let (kernel, helper) = rest.split_once('$')?;
        (!kernel.is_empty() && !helper.is_empty()).then_some((kernel, helper))
    }
}

/// One `<0xN> Attribute / Format / Value` record of an `.nv.info` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attribute {
    pub name: String,
    pub format: String,
    /// The value text, continuation lines joined with a space.
    pub value: String,
}

/// What `.nv.info.<kernel>` says about one kernel.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelInfo {
    /// Parameters sorted by ordinal.
    pub params: Vec<ParamSlot>,
    /// `EIATTR_MAX_THREADS` (x, y, z) from `__launch_bounds__` / `.maxntid`.
    pub max_threads: Option<[u32; 3]>,
    /// `EIATTR_MAXREG_COUNT` (255 when no limit was set).
    pub max_reg_count: Option<u32>,
    pub num_barriers: Option<u32>,
    pub attributes: Vec<Attribute>,
}

impl KernelInfo {
    /// Threads per block the kernel can be launched with (product of `EIATTR_MAX_THREADS`).
    pub fn max_threads_per_block(&self) -> Option<u32> {
        let [x, y, z] = self.max_threads?;
        x.checked_mul(y)?.checked_mul(z)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ElfDump {
    /// Section names by index.
    pub sections: BTreeMap<u32, String>,
    pub symbols: Vec<Symbol>,
    /// `.nv.info.<kernel>` by kernel symbol.
    pub kernels: BTreeMap<String, KernelInfo>,
}

impl ElfDump {
    /// Entry-point symbols, in symbol-table order.
    pub fn entries(&self) -> impl Iterator<Item = &Symbol> {
        self.symbols.iter().filter(|s| s.is_entry())
    }

    /// The code section index of function `name` (`.text.<name>`).
    pub fn text_section(&self, name: &str) -> Option<u32> {
        let want = format!(".text.{name}");
        self.sections
            .iter()
            .find(|(_, n)| **n == want)
            .map(|(i, _)| *i)
    }
}

static_regex!(
    re_section_row,
    r"^\s*(?P<idx>[0-9a-f]+)\s+[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+\s+(?P<name>\S+)$"
);
static_regex!(
    re_section_header_line,
    r"^\.section\s+(?P<name>\S+)(?:\s+\S+)?$"
);
static_regex!(
    re_symbol_row,
    r"^\s*(?P<idx>0x[0-9a-f]+|\d+)\s+(?P<value>0x[0-9a-f]+|\d+)\s+(?P<size>0x[0-9a-f]+|\d+)\s+(?P<info>0x[0-9a-f]+|\d+)\s+(?P<other>0x[0-9a-f]+|\d+)\s+(?P<shndx>0x[0-9a-f]+|\d+)\s+(?P<name>\S.*?)\s*$"
);
static_regex!(
    re_symbol_header,
    r"^\s*index\s+value\s+size\s+info\s+other\s+shndx\s+name\s*$"
);
static_regex!(re_attr_index, r"^\s*<0x[0-9a-f]+>\s*$");
static_regex!(
    re_attr_field,
    r"^\s*(?P<key>Attribute|Format|Value):\s*(?P<val>.*?)\s*$"
);
static_regex!(
    re_kparam,
    r"Ordinal\s*:\s*(?P<ord>0x[0-9a-f]+)\s+Offset\s*:\s*(?P<off>0x[0-9a-f]+)\s+Size\s*:\s*(?P<size>0x[0-9a-f]+)"
);

enum Body {
    Skip,
    Symtab,
    NvInfo(String),
}

pub fn parse(text: &str) -> Result<ElfDump, ParseError> {
    if text.trim().is_empty() {
        return Err(ParseError::Empty { tool: Tool::Elf });
    }
    let mut out = ElfDump::default();
    let mut lines = text.lines().enumerate().peekable();

    // The section table comes first; its names tell section headers from body text below.
    let mut saw_table = false;
    while let Some((_, l)) = lines.peek() {
        if l.trim_start().starts_with("Index Offset") {
            saw_table = true;
            lines.next();
            break;
        }
        lines.next();
    }
    if !saw_table {
        return Err(ParseError::Truncated {
            tool: Tool::Elf,
            detail: "no `Sections:` table".into(),
        });
    }
    while let Some((i, l)) = lines.peek().copied() {
        if l.trim().is_empty() {
            break;
        }
        let c = re_section_row()
            .captures(l)
            .ok_or_else(|| ParseError::Unrecognized {
                tool: Tool::Elf,
                line: i + 1,
                text: l.to_string(),
                expected:
                    "a section table row `Index Offset Size ES Align Type Flags Link Info Name`",
            })?;
        let idx = u32::from_str_radix(&c["idx"], 16).map_err(|_| ParseError::Unrecognized {
            tool: Tool::Elf,
            line: i + 1,
            text: l.to_string(),
            expected: "a hexadecimal section index",
        })?;
        out.sections.insert(idx, c["name"].to_string());
        lines.next();
    }

    let mut body = Body::Skip;
    let mut attr: Option<(usize, Attribute)> = None;
    for (i, raw) in lines {
        let lineno = i + 1;
        let line = raw.trim_end();
        let header = re_section_header_line()
            .captures(line)
            .map(|c| c["name"].to_string())
            .or_else(|| {
                out.sections
                    .values()
                    .any(|n| n == line)
                    .then(|| line.to_string())
            });
        if let Some(name) = header {
            finish_attribute(&mut out, &body, attr.take())?;
            body = if name == ".symtab" {
                Body::Symtab
            } else if let Some(k) = name.strip_prefix(".nv.info.") {
                out.kernels.entry(k.to_string()).or_default();
                Body::NvInfo(k.to_string())
            } else {
                Body::Skip
            };
            continue;
        }
        let unrecognized = |expected: &'static str| ParseError::Unrecognized {
            tool: Tool::Elf,
            line: lineno,
            text: raw.to_string(),
            expected,
        };
        match &body {
            Body::Skip => {}
            Body::Symtab => {
                if line.trim().is_empty() || re_symbol_header().is_match(line) {
                    continue;
                }
                let c = re_symbol_row().captures(line).ok_or_else(|| {
                    unrecognized("a symbol row `index value size info other shndx name`")
                })?;
                let n = |k: &str| {
                    number(&c[k]).ok_or_else(|| unrecognized("numbers in the symbol row"))
                };
                let small = |k: &str| {
                    number_u32(&c[k]).ok_or_else(|| unrecognized("numbers in the symbol row"))
                };
                out.symbols.push(Symbol {
                    name: c["name"].to_string(),
                    value: n("value")?,
                    size: n("size")?,
                    info: small("info")?,
                    other: small("other")?,
                    section: small("shndx")?,
                });
            }
            Body::NvInfo(_) => {
                if line.trim().is_empty() {
                    continue;
                }
                if re_attr_index().is_match(line) {
                    finish_attribute(&mut out, &body, attr.take())?;
                    attr = Some((
                        lineno,
                        Attribute {
                            name: String::new(),
                            format: String::new(),
                            value: String::new(),
                        },
                    ));
                    continue;
                }
                let a = &mut attr
                    .as_mut()
                    .ok_or_else(|| unrecognized("`<0xN>` before attribute fields"))?
                    .1;
                match re_attr_field().captures(line) {
                    Some(c) => match &c["key"] {
                        "Attribute" => a.name = c["val"].to_string(),
                        "Format" => a.format = c["val"].to_string(),
                        _ => a.value = c["val"].to_string(),
                    },
                    // A continuation of the value (`KPARAM_INFO` prints two lines).
                    None if !a.name.is_empty() => {
                        a.value.push(' ');
                        a.value.push_str(line.trim());
                    }
                    None => return Err(unrecognized("`Attribute:`, `Format:` or `Value:`")),
                }
            }
        }
    }
    finish_attribute(&mut out, &body, attr.take())?;
    for info in out.kernels.values_mut() {
        info.params.sort_by_key(|p| p.ordinal);
    }
    Ok(out)
}

/// Stores a finished attribute record in its kernel, interpreting the ones the report needs.
fn finish_attribute(
    out: &mut ElfDump,
    body: &Body,
    attr: Option<(usize, Attribute)>,
) -> Result<(), ParseError> {
    let (Body::NvInfo(kernel), Some((at, a))) = (body, attr) else {
        return Ok(());
    };
    let bad = |what: &str| ParseError::Truncated {
        tool: Tool::Elf,
        detail: format!(
            "`.nv.info.{kernel}` record at line {at} ({}) {what}",
            if a.name.is_empty() {
                "unnamed"
            } else {
                &a.name
            }
        ),
    };
    if a.name.is_empty() || a.format.is_empty() {
        return Err(bad("lacks its Attribute or Format field"));
    }
    let info = out.kernels.entry(kernel.clone()).or_default();
    match a.name.as_str() {
        "EIATTR_KPARAM_INFO" => {
            let c = re_kparam()
                .captures(&a.value)
                .ok_or_else(|| bad("has no `Ordinal Offset Size` value"))?;
            let n = |k: &str| {
                number_u32(&c[k]).ok_or_else(|| bad("has a figure that does not fit 32 bits"))
            };
            info.params.push(ParamSlot {
                ordinal: n("ord")?,
                offset: n("off")?,
                size: n("size")?,
            });
        }
        "EIATTR_MAX_THREADS" => {
            let v: Vec<u32> = a.value.split_whitespace().filter_map(number_u32).collect();
            let dims: [u32; 3] = v
                .try_into()
                .map_err(|_| bad("does not hold three dimensions"))?;
            info.max_threads = Some(dims);
        }
        "EIATTR_MAXREG_COUNT" => {
            info.max_reg_count =
                Some(number_u32(&a.value).ok_or_else(|| bad("has no register count"))?)
        }
        "EIATTR_NUM_BARRIERS" => {
            info.num_barriers =
                Some(number_u32(&a.value).ok_or_else(|| bad("has no barrier count"))?)
        }
        _ => {}
    }
    info.attributes.push(a);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "
64-bit ELF: type=ET_EXEC, ABI=8, sm=90, toolkit=13.0, flags=0xa005a04
Sections:
Index Offset   Size ES Align                      Type    Flags Link     Info Name
    1     40    1df  0  1                       STRTAB        0    0        0 .shstrtab
    3    488    180 18  8                       SYMTAB        0    2       10 .symtab
    d   1540     7c  0  4                    CUDA_INFO       40    3       13 .nv.info.k
   13   1680    600  0 80                     PROGBITS        6    3        e .text.k
   1f   7a18    224  0  4                     PROGBITS       42    0       14 .nv_debug_ptx_txt

.section .symtab
 index           value           size      info    other  shndx    name  
   0               0               0        0        0      0     (null)
 0x7            0xe0          0x2920      0x2        0   0x13     $k$_Z6helperv
 0xe               0           0x600     0x12     0x10   0x13     k


.nv_debug_ptx_txt
.version 9.0
.visible .entry k(

.nv.info.k
\t<0x1>
\tAttribute:\tEIATTR_KPARAM_INFO
\tFormat:\tEIFMT_SVAL
\tValue:\tIndex : 0x0\tOrdinal : 0x1\tOffset  : 0x8\tSize    : 0x8
\t\tPointee's logAlignment : 0x0\tSpace : 0x0\tcbank : 0x1f\tParameter Space : CBANK\t
\t<0x2>
\tAttribute:\tEIATTR_KPARAM_INFO
\tFormat:\tEIFMT_SVAL
\tValue:\tIndex : 0x0\tOrdinal : 0x0\tOffset  : 0x0\tSize    : 0x8
\t\tPointee's logAlignment : 0x0\tSpace : 0x0\tcbank : 0x1f\tParameter Space : CBANK\t
\t<0x3>
\tAttribute:\tEIATTR_MAXREG_COUNT
\tFormat:\tEIFMT_HVAL
\tValue:\t0x20
\t<0x4>
\tAttribute:\tEIATTR_MAX_THREADS
\tFormat:\tEIFMT_SVAL
\tValue:\t0x100 0x1 0x1 

.text.k
lmem=0\tsmem=9216
0xff017b82 0x00000a00 0x00000800 0x000fe200
";

    #[test]
    fn symbols_params_and_bounds() {
        let e = parse(TEXT).unwrap();
        assert_eq!(e.sections.get(&0xd).map(String::as_str), Some(".nv.info.k"));
        assert_eq!(e.text_section("k"), Some(0x13));
        let entries: Vec<&str> = e.entries().map(|s| s.name.as_str()).collect();
        assert_eq!(entries, vec!["k"]);
        let helper = e.symbols.iter().find(|s| s.clone_of().is_some()).unwrap();
        assert_eq!(helper.clone_of(), Some(("k", "_Z6helperv")));
        assert_eq!(helper.value, 0xe0);
        let k = &e.kernels["k"];
        assert_eq!(
            k.params,
            vec![
                ParamSlot {
                    ordinal: 0,
                    offset: 0,
                    size: 8
                },
                ParamSlot {
                    ordinal: 1,
                    offset: 8,
                    size: 8
                }
            ]
        );
        assert_eq!(k.max_threads_per_block(), Some(256));
        assert_eq!(k.max_reg_count, Some(32));
    }

    #[test]
    fn errors() {
        assert_eq!(parse(""), Err(ParseError::Empty { tool: Tool::Elf }));
        assert!(matches!(
            parse("64-bit ELF\n"),
            Err(ParseError::Truncated { .. })
        ));
        let bad_value = TEXT.replace("Value:\t0x100 0x1 0x1 ", "Value:\t0x100");
        assert!(matches!(
            parse(&bad_value),
            Err(ParseError::Truncated { .. })
        ));
        let bad_symbol = TEXT.replace(
            " 0xe               0           0x600",
            " 0xe               zz           0x600",
        );
        assert!(
            matches!(parse(&bad_symbol), Err(ParseError::Unrecognized { .. })),
            "{:?}",
            parse(&bad_symbol)
        );
        let cut = &TEXT[..TEXT.find("\tFormat:\tEIFMT_HVAL").unwrap()];
        assert!(matches!(parse(cut), Err(ParseError::Truncated { .. })));
    }
}
