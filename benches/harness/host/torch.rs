//! PyTorch's readings of the fused ops (benches/torch_fused.py's JSON), the comparators of
//! benches/fused.rs: which modes a file has, and whether each reading was taken as the bench
//! takes its own (the same input sets, outputs rotated with them).

/// The torch modes a reading is checked against, with the name the checks give them.
pub const TORCH_MODES: &[(&str, &str)] = &[("eager", "torch eager"), ("compile", "torch.compile")];

/// One torch reading.
#[derive(Debug, Clone, PartialEq)]
pub struct TorchReading {
    /// `eager` or `compile` (a file without modes is eager's).
    pub mode: String,
    pub op: String,
    pub rows: usize,
    pub cols: usize,
    pub median_us: f64,
    /// The input sets its windows rotated over (absent in files older than the rule).
    pub input_sets: Option<usize>,
    /// Whether each call's outputs were held until its set came round again, so that they
    /// rotated with the inputs (`"outputs": "rotated"`). Files older than the rule dropped each
    /// output at once: every call wrote the one block the allocator had just freed, L2-resident
    /// where it fits, which the crate's bench, rotating its outputs, does not get.
    pub outputs_rotated: bool,
}

/// The torch readings of one file.
#[derive(Debug, Clone, PartialEq)]
pub struct TorchTimes(pub Vec<TorchReading>);

impl TorchTimes {
    /// The readings of the JSON text of file `path` (named in errors). Cells torch failed at
    /// (`"error"`) are left out: nothing to compare against.
    pub fn parse(path: &str, text: &str) -> Result<TorchTimes, String> {
        let json: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("{path}: {e}"))?;
        let results = json["results"]
            .as_array()
            .ok_or(format!("{path}: no `results` array"))?;
        let mut out = Vec::new();
        for r in results {
            let op = r["op"]
                .as_str()
                .ok_or(format!("{path}: a result without `op`"))?;
            let count = |key: &str| {
                r[key]
                    .as_u64()
                    .map(|v| v as usize)
                    .ok_or(format!("{path}: {op} without `{key}`"))
            };
            if r.get("error").is_some() {
                continue;
            }
            let mode = r["mode"].as_str().unwrap_or("eager");
            if !TORCH_MODES.iter().any(|(m, _)| *m == mode) {
                return Err(format!(
                    "{path}: {op} has mode `{mode}`, not eager or compile"
                ));
            }
            out.push(TorchReading {
                mode: mode.to_string(),
                op: op.to_string(),
                rows: count("rows")?,
                cols: count("cols")?,
                median_us: r["median_us"]
                    .as_f64()
                    .ok_or(format!("{path}: {op} without `median_us`"))?,
                input_sets: r["input_sets"].as_u64().map(|v| v as usize),
                outputs_rotated: r["outputs"].as_str() == Some("rotated"),
            });
        }
        Ok(TorchTimes(out))
    }

    /// The reading of `op` in `mode` at `rows` x `cols`, if the file has one.
    pub fn get(&self, mode: &str, op: &str, rows: usize, cols: usize) -> Option<&TorchReading> {
        self.0
            .iter()
            .find(|t| t.mode == mode && t.op == op && t.rows == rows && t.cols == cols)
    }
}

impl TorchReading {
    /// Why this reading cannot be compared with a bench reading that rotated `sets` input sets
    /// and its outputs with them; `None` where it can.
    pub fn not_comparable(&self, sets: usize) -> Option<String> {
        if self.input_sets != Some(sets) {
            let torch = self
                .input_sets
                .map_or("an unknown number of".into(), |n| n.to_string());
            return Some(format!(
                "not compared: torch rotated {torch} input sets, this bench {sets}"
            ));
        }
        if !self.outputs_rotated {
            return Some(
                "not compared: torch wrote one output buffer (a torch_fused.py older than \
                 rotated outputs), this bench rotates its outputs"
                    .into(),
            );
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(results: &str) -> Result<TorchTimes, String> {
        TorchTimes::parse("t.json", &format!("{{\"results\": [{results}]}}"))
    }

    const COMPILE: &str = r#"{"op": "rmsnorm_fwd", "mode": "compile", "rows": 4000, "cols": 768,
        "median_us": 6.14, "input_sets": 9, "outputs": "rotated"}"#;

    #[test]
    fn readings_carry_their_mode_rotation_and_outputs() {
        let older = r#"{"op": "softmax_fwd", "rows": 1, "cols": 768, "median_us": 1.9}"#;
        let failed = r#"{"op": "layernorm_bwd", "rows": 4096, "cols": 32768, "error": "oom"}"#;
        let t = file(&[COMPILE, older, failed].join(",")).unwrap();
        assert_eq!(t.0.len(), 2, "the failed cell is left out");
        let c = t.get("compile", "rmsnorm_fwd", 4000, 768).unwrap();
        assert_eq!(
            (c.median_us, c.input_sets, c.outputs_rotated),
            (6.14, Some(9), true)
        );
        assert_eq!(c.not_comparable(9), None);
        let e = t.get("eager", "softmax_fwd", 1, 768).unwrap();
        assert_eq!((e.input_sets, e.outputs_rotated), (None, false));
        assert!(t.get("eager", "rmsnorm_fwd", 4000, 768).is_none());
    }

    #[test]
    fn readings_taken_otherwise_than_the_bench_are_not_compared() {
        let t = file(COMPILE).unwrap();
        let c = &t.0[0];
        let sets = c.not_comparable(8).unwrap();
        assert!(
            sets.contains("torch rotated 9 input sets, this bench 8"),
            "{sets}"
        );
        let dropped = TorchReading {
            outputs_rotated: false,
            ..c.clone()
        };
        let why = dropped.not_comparable(9).unwrap();
        assert!(why.contains("one output buffer"), "{why}");
        let unknown = TorchReading {
            input_sets: None,
            ..c.clone()
        };
        assert!(unknown
            .not_comparable(9)
            .unwrap()
            .contains("an unknown number of"));
    }

    #[test]
    fn malformed_files_are_refused_by_name() {
        let e = TorchTimes::parse("t.json", "{").unwrap_err();
        assert!(e.starts_with("t.json: "), "{e}");
        assert!(TorchTimes::parse("t.json", "{}")
            .unwrap_err()
            .contains("no `results` array"));
        let e = file(r#"{"rows": 1}"#).unwrap_err();
        assert!(e.contains("a result without `op`"), "{e}");
        let e = file(r#"{"op": "softmax_fwd", "mode": "max-autotune", "rows": 1, "cols": 8, "median_us": 1.0}"#)
            .unwrap_err();
        assert!(e.contains("mode `max-autotune`"), "{e}");
        let e = file(r#"{"op": "softmax_fwd", "rows": 1, "median_us": 1.0}"#).unwrap_err();
        assert!(e.contains("softmax_fwd without `cols`"), "{e}");
        let e = file(r#"{"op": "softmax_fwd", "rows": 1, "cols": 8}"#).unwrap_err();
        assert!(e.contains("without `median_us`"), "{e}");
    }
}
