//! `nvcc -Xptxas -v` stderr: per function registers, barriers, shared and constant memory,
//! stack frame and spills; register-limit overrides; warnings; `ptxas error` / `fatal` lines.
//!
//! Lines that start with `ptxas` are parsed strictly (an unknown one is an error). Other lines
//! come from nvcc and its front end (diagnostics with their source excerpts): their
//! `warning` headers are kept as warnings, the rest is context and is skipped.

use super::{number_u32, static_regex, ParseError, Tool};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What ptxas printed for one function (an entry point or a device function).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PtxasFunction {
    /// Symbol (mangled for C++ names).
    pub name: String,
    /// Whether ptxas compiled it as an entry function (`__global__`).
    pub entry: bool,
    /// Target named in `Compiling entry function 'X' for 'sm_90'`.
    pub arch: Option<String>,
    pub registers: Option<u32>,
    pub barriers: Option<u32>,
    /// Static shared memory; ptxas omits the figure when it is zero.
    pub smem_bytes: Option<u32>,
    /// `cmem[n]` sizes by bank (sm_90 omits `cmem[0]`).
    pub cmem_bytes: BTreeMap<u32, u32>,
    pub stack_frame_bytes: Option<u32>,
    pub spill_stores: Option<u32>,
    pub spill_loads: Option<u32>,
    pub cumulative_stack_bytes: Option<u32>,
    /// `N bytes lmem` (local memory outside the stack frame; printed by some targets).
    pub lmem_bytes: Option<u32>,
}

/// `Overriding maximum register limit 256 for 'k' with 24 of maxrregcount option` (names the
/// function) or `Overriding global maxrregcount 64 with entry-specific value 40 of .maxnreg`
/// (does not).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegisterOverride {
    pub function: Option<String>,
    pub from: u32,
    pub to: u32,
    /// The rest of the line: what the new limit comes from.
    pub because: String,
}

/// `Registers are spilled to local memory in function 'f', N bytes spill stores, M bytes
/// spill loads` (printed with `-warn-spills`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpillWarning {
    pub function: String,
    pub spill_stores: u32,
    pub spill_loads: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PtxasLog {
    pub gmem_bytes: Option<u32>,
    /// Functions in the order ptxas first names them.
    pub functions: Vec<PtxasFunction>,
    pub register_overrides: Vec<RegisterOverride>,
    pub spill_warnings: Vec<SpillWarning>,
    /// Warning lines verbatim (ptxas, nvcc and front-end warnings).
    pub warnings: Vec<String>,
}

impl PtxasLog {
    pub fn function(&self, name: &str) -> Option<&PtxasFunction> {
        self.functions.iter().find(|f| f.name == name)
    }

    pub fn entries(&self) -> impl Iterator<Item = &PtxasFunction> {
        self.functions.iter().filter(|f| f.entry)
    }
}

static_regex!(
    re_ptxas_line,
    r"^ptxas (?:(?P<file>.+?), line (?P<line>\d+); )?(?P<kind>info|warning|error|fatal)\s*:\s?(?P<msg>.*)$"
);
static_regex!(
    re_gmem,
    r"^(?P<gmem>\d+) bytes gmem(?:, \d+ bytes (?:cmem\[\d+\]|smem|lmem))*$"
);
static_regex!(re_coded_note, r"^\(C\d+\) ");
static_regex!(
    re_compiling,
    r"^Compiling entry function '(?P<name>[^']+)' for '(?P<arch>[^']+)'$"
);
static_regex!(
    re_properties_for,
    r"^Function properties for (?P<name>\S+)$"
);
static_regex!(
    re_properties,
    r"^\s+(?P<stack>\d+) bytes stack frame, (?P<st>\d+) bytes spill stores, (?P<ld>\d+) bytes spill loads$"
);
static_regex!(
    re_override_named,
    r"^Overriding maximum register limit (?P<from>\d+) for '(?P<name>[^']+)' with\s+(?P<to>\d+)\s*(?P<why>.*)$"
);
static_regex!(
    re_override_global,
    r"^Overriding global maxrregcount (?P<from>\d+) with entry-specific value (?P<to>\d+)\s*(?P<why>.*)$"
);
static_regex!(
    re_spill_warning,
    r"^Registers are spilled to local memory in function '(?P<name>[^']+)', (?P<st>\d+) bytes spill stores, (?P<ld>\d+) bytes spill loads$"
);
static_regex!(
    re_front_end_warning,
    r"^(?:[^\s()][^()]*\(\d+\): warning|nvcc warning\s*:)"
);
static_regex!(
    re_nvcc_error,
    r"^(?:[^\s()][^()]*\(\d+\): (?:catastrophic )?error|nvcc (?:error|fatal)\s*:)"
);

/// Parses one `Used ...` line body: `Used 22 registers, used 0 barriers, 8192 bytes smem, ...`.
fn parse_usage(body: &str, f: &mut PtxasFunction) -> Result<(), &'static str> {
    for part in body.split(", ") {
        let words: Vec<&str> = part.split_whitespace().collect();
        let n = |i: usize| words.get(i).and_then(|w| number_u32(w)).ok_or("a count");
        match words.as_slice() {
            ["Used", _, "registers"] => f.registers = Some(n(1)?),
            ["used", _, "barriers"] => f.barriers = Some(n(1)?),
            [_, "bytes", "smem"] => f.smem_bytes = Some(n(0)?),
            [_, "bytes", "lmem"] => f.lmem_bytes = Some(n(0)?),
            [_, "bytes", "cumulative", "stack", "size"] => f.cumulative_stack_bytes = Some(n(0)?),
            [_, "bytes", bank] if bank.starts_with("cmem[") && bank.ends_with(']') => {
                let idx = number_u32(&bank[5..bank.len() - 1]).ok_or("a cmem bank index")?;
                f.cmem_bytes.insert(idx, n(0)?);
            }
            // Older arches print texture, sampler and surface counts; they do not matter here.
            [_, "textures" | "samplers" | "surfaces" | "texture" | "sampler" | "surface"] => {}
            _ => return Err("`Used N registers, used N barriers, N bytes smem, N bytes cmem[n]`"),
        }
    }
    Ok(())
}

/// Parses `nvcc -Xptxas -v` stderr.
pub fn parse(text: &str) -> Result<PtxasLog, ParseError> {
    if text.trim().is_empty() {
        return Err(ParseError::Empty { tool: Tool::Ptxas });
    }
    let unrecognized = |line: usize, text: &str, expected: &'static str| ParseError::Unrecognized {
        tool: Tool::Ptxas,
        line,
        text: text.to_string(),
        expected,
    };
    let mut log = PtxasLog::default();
    let mut errors = Vec::new();
    let mut current: Option<usize> = None;
    // A `Function properties for` line waits for its figures on the next line.
    let mut awaiting_properties: Option<(usize, usize)> = None;

    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let line = raw.trim_end();
        if let Some((fi, _)) = awaiting_properties.take() {
            let c = re_properties().captures(line).ok_or_else(|| {
                unrecognized(
                    lineno,
                    line,
                    "`N bytes stack frame, N bytes spill stores, N bytes spill loads`",
                )
            })?;
            let f = &mut log.functions[fi];
            let num = |k: &str| {
                number_u32(&c[k])
                    .ok_or_else(|| unrecognized(lineno, line, "counts that fit 32 bits"))
            };
            f.stack_frame_bytes = Some(num("stack")?);
            f.spill_stores = Some(num("st")?);
            f.spill_loads = Some(num("ld")?);
            continue;
        }
        let Some(c) = re_ptxas_line().captures(line) else {
            if re_nvcc_error().is_match(line) {
                errors.push(line.to_string());
            } else if re_front_end_warning().is_match(line) {
                log.warnings.push(line.to_string());
            } else if line.starts_with("ptxas") {
                return Err(unrecognized(
                    lineno,
                    line,
                    "`ptxas info|warning|error|fatal : ...`",
                ));
            }
            continue;
        };
        let msg = c["msg"].trim();
        match &c["kind"] {
            "error" | "fatal" => errors.push(line.to_string()),
            "warning" => {
                if let Some(w) = re_spill_warning().captures(msg) {
                    let num = |k: &str| {
                        number_u32(&w[k])
                            .ok_or_else(|| unrecognized(lineno, line, "counts that fit 32 bits"))
                    };
                    log.spill_warnings.push(SpillWarning {
                        function: w["name"].to_string(),
                        spill_stores: num("st")?,
                        spill_loads: num("ld")?,
                    });
                }
                log.warnings.push(line.to_string());
            }
            _ => {
                if msg.starts_with("Compile time") || msg.is_empty() {
                } else if re_coded_note().is_match(msg) {
                    // Numbered advisories (`(C7515) ...`) are notes for the reader, kept verbatim.
                    log.warnings.push(line.to_string());
                } else if let Some(g) = re_gmem().captures(msg) {
                    log.gmem_bytes = number_u32(&g["gmem"]);
                } else if let Some(e) = re_compiling().captures(msg) {
                    let fi = function_index(&mut log, &e["name"]);
                    let f = &mut log.functions[fi];
                    f.entry = true;
                    f.arch = Some(e["arch"].to_string());
                    current = Some(fi);
                } else if let Some(p) = re_properties_for().captures(msg) {
                    let fi = function_index(&mut log, &p["name"]);
                    current = Some(fi);
                    awaiting_properties = Some((fi, lineno));
                } else if let Some(body) = msg.strip_prefix("Used ") {
                    let fi = current.ok_or_else(|| {
                        unrecognized(lineno, line, "a `Used` line after a function header")
                    })?;
                    parse_usage(&format!("Used {body}"), &mut log.functions[fi])
                        .map_err(|expected| unrecognized(lineno, line, expected))?;
                } else if let Some(o) = re_override_named().captures(msg) {
                    log.register_overrides.push(RegisterOverride {
                        function: Some(o["name"].to_string()),
                        from: number_u32(&o["from"])
                            .ok_or_else(|| unrecognized(lineno, line, "a register count"))?,
                        to: number_u32(&o["to"])
                            .ok_or_else(|| unrecognized(lineno, line, "a register count"))?,
                        because: o["why"].trim().to_string(),
                    });
                } else if let Some(o) = re_override_global().captures(msg) {
                    log.register_overrides.push(RegisterOverride {
                        function: None,
                        from: number_u32(&o["from"])
                            .ok_or_else(|| unrecognized(lineno, line, "a register count"))?,
                        to: number_u32(&o["to"])
                            .ok_or_else(|| unrecognized(lineno, line, "a register count"))?,
                        because: o["why"].trim().to_string(),
                    });
                } else {
                    return Err(unrecognized(
                        lineno,
                        line,
                        "a known `ptxas info` line (gmem, Compiling entry function, Function properties, Used, Overriding, Compile time)",
                    ));
                }
            }
        }
    }
    if !errors.is_empty() {
        return Err(ParseError::ToolFailed {
            tool: Tool::Ptxas,
            messages: errors,
        });
    }
    if let Some((fi, at)) = awaiting_properties {
        return Err(ParseError::Truncated {
            tool: Tool::Ptxas,
            detail: format!(
                "`Function properties for {}` (line {at}) has no figures after it",
                log.functions[fi].name
            ),
        });
    }
    for f in log.entries() {
        if f.registers.is_none() {
            return Err(ParseError::Truncated {
                tool: Tool::Ptxas,
                detail: format!("entry function `{}` has no `Used N registers` line", f.name),
            });
        }
        if f.stack_frame_bytes.is_none() {
            return Err(ParseError::Truncated {
                tool: Tool::Ptxas,
                detail: format!(
                    "entry function `{}` has no `Function properties` figures",
                    f.name
                ),
            });
        }
    }
    Ok(log)
}

fn function_index(log: &mut PtxasLog, name: &str) -> usize {
    match log.functions.iter().position(|f| f.name == name) {
        Some(i) => i,
        None => {
            log.functions.push(PtxasFunction {
                name: name.to_string(),
                ..Default::default()
            });
            log.functions.len() - 1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SM80: &str = "ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'copy_cp_async' for 'sm_80'
ptxas info    : Function properties for copy_cp_async
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 22 registers, used 0 barriers, 8192 bytes smem, 376 bytes cmem[0]
ptxas info    : Compile time = 24.849 ms
";

    #[test]
    fn entry_with_all_fields() {
        let log = parse(SM80).unwrap();
        assert_eq!(log.gmem_bytes, Some(0));
        let f = log.function("copy_cp_async").unwrap();
        assert!(f.entry);
        assert_eq!(f.arch.as_deref(), Some("sm_80"));
        assert_eq!(
            (f.registers, f.barriers, f.smem_bytes),
            (Some(22), Some(0), Some(8192))
        );
        assert_eq!(f.cmem_bytes.get(&0), Some(&376));
        assert_eq!(
            (f.stack_frame_bytes, f.spill_stores, f.spill_loads),
            (Some(0), Some(0), Some(0))
        );
    }

    #[test]
    fn sm90_omits_cmem0() {
        let log = parse(
            &SM80
                .replace(", 376 bytes cmem[0]", "")
                .replace("sm_80", "sm_90"),
        )
        .unwrap();
        assert!(log.functions[0].cmem_bytes.is_empty());
    }

    #[test]
    fn overrides_both_forms() {
        let text = "ptxas info    : Overriding maximum register limit 256 for 'local_indexed' with  24 of maxrregcount option\n\
                    ptxas info    : Overriding global maxrregcount 64 with entry-specific value 40 of .maxnreg\n";
        let log = parse(text).unwrap();
        assert_eq!(log.register_overrides.len(), 2);
        assert_eq!(
            log.register_overrides[0].function.as_deref(),
            Some("local_indexed")
        );
        assert_eq!(
            (log.register_overrides[0].from, log.register_overrides[0].to),
            (256, 24)
        );
        assert_eq!(log.register_overrides[1].function, None);
        assert_eq!(log.register_overrides[1].to, 40);
    }

    #[test]
    fn fatal_is_tool_failed() {
        let text = "ptxas /tmp/x.ptx, line 26; error   : Unknown modifier '.real'\nptxas fatal   : Ptx assembly aborted due to errors\n";
        match parse(text) {
            Err(ParseError::ToolFailed { messages, .. }) => assert_eq!(messages.len(), 2),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn truncated_and_empty() {
        assert_eq!(parse(" \n"), Err(ParseError::Empty { tool: Tool::Ptxas }));
        let cut = &SM80[..SM80.find("    0 bytes stack").unwrap()];
        assert!(
            matches!(parse(cut), Err(ParseError::Truncated { .. })),
            "{:?}",
            parse(cut)
        );
        let no_used = SM80.replace("ptxas info    : Used 22 registers, used 0 barriers, 8192 bytes smem, 376 bytes cmem[0]\n", "");
        assert!(matches!(parse(&no_used), Err(ParseError::Truncated { .. })));
    }

    #[test]
    fn unknown_ptxas_line_is_an_error() {
        let e = parse("ptxas info    : Something new\n").unwrap_err();
        assert!(
            matches!(e, ParseError::Unrecognized { line: 1, .. }),
            "{e:?}"
        );
        let e = parse(&SM80.replace("used 0 barriers", "used 0 gizmos")).unwrap_err();
        assert!(
            matches!(e, ParseError::Unrecognized { line: 5, .. }),
            "{e:?}"
        );
    }

    #[test]
    fn front_end_warnings_are_kept_and_context_skipped() {
        let text = format!(
            "k.cu(3): warning #177-D: variable \"x\" was declared but never referenced\n    int x;\n        ^\n\n\
             Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n\n{SM80}"
        );
        let log = parse(&text).unwrap();
        assert_eq!(log.warnings.len(), 1);
        assert!(log.warnings[0].contains("#177-D"));
    }

    #[test]
    fn lmem_gmem_variants_and_coded_notes() {
        let text = format!(
            "ptxas info    : 8 bytes gmem, 16 bytes cmem[3], 4 bytes smem\n\
             ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized\n{}",
            SM80.replace("8192 bytes smem", "8192 bytes smem, 16 bytes lmem").replace("ptxas info    : 0 bytes gmem\n", "")
        );
        let log = parse(&text).unwrap();
        assert_eq!(log.gmem_bytes, Some(8));
        assert_eq!(log.functions[0].lmem_bytes, Some(16));
        assert!(log.warnings[0].contains("(C7515)"));
    }

    #[test]
    fn spill_warnings() {
        let text = "ptxas warning : Registers are spilled to local memory in function '_Z1hv', 700 bytes spill stores, 744 bytes spill loads\n";
        let log = parse(text).unwrap();
        assert_eq!(
            log.spill_warnings,
            vec![SpillWarning {
                function: "_Z1hv".into(),
                spill_stores: 700,
                spill_loads: 744
            }]
        );
        assert_eq!(log.warnings.len(), 1);
    }
}
