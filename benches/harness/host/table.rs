//! The per-shape table of a bench run, as markdown (summary.md) or aligned text (stdout and
//! `run_bench`): % of the reference or speed ratio to the comparator per shape.

use super::reading::{Flag, Reading};

pub struct Table {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

fn flags_cell(r: &Reading) -> String {
    let cells: Vec<String> = r
        .flags
        .iter()
        .map(|f| match f {
            Flag::Fallback => "FALLBACK".to_string(),
            Flag::Wrong(why) => format!("WRONG: {why}"),
        })
        .collect();
    if cells.is_empty() {
        "ok".into()
    } else {
        cells.join("; ")
    }
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

impl Table {
    pub fn of(readings: &[Reading]) -> Table {
        let headers = [
            "shape",
            "kernel",
            "dtype",
            "p50 us",
            "p95 us",
            "min us",
            "max us",
            "throughput",
            "% of reference",
            "comparator",
            "comparator p50 us",
            "speed ratio",
            "separation",
            "windows",
            "flags",
        ];
        let rows = readings
            .iter()
            .map(|r| {
                let unit = r.work.map(|w| w.unit()).unwrap_or("");
                let c = r.comparator.as_ref();
                vec![
                    r.label.clone(),
                    r.stamp.kernel.clone(),
                    r.stamp.dtype.clone(),
                    format!("{:.2}", r.summary.p50),
                    format!("{:.2}", r.summary.p95),
                    format!("{:.2}", r.summary.min),
                    format!("{:.2}", r.summary.max),
                    opt(r.throughput(), |t| format!("{t:.1} {unit}")),
                    opt(r.fraction_of_reference(), |f| format!("{:.1}%", f * 100.0)),
                    match (c, &r.reference) {
                        (Some(c), _) => c.stamp.comparator.clone(),
                        (None, Some(rf)) => rf.label.clone(),
                        (None, None) => r.stamp.comparator.clone(),
                    },
                    opt(c.map(|c| c.comparison.comparator.p50), |t| {
                        format!("{t:.2}")
                    }),
                    opt(c.map(|c| c.comparison.speed_ratio), |x| format!("{x:.3}x")),
                    c.map(|c| c.comparison.separation.to_string())
                        .unwrap_or_else(|| "-".into()),
                    match c {
                        Some(c) => format!(
                            "{}{}",
                            r.summary.n,
                            if c.extended { " (extended)" } else { "" }
                        ),
                        None => r.summary.n.to_string(),
                    },
                    flags_cell(r),
                ]
            })
            .collect();
        Table {
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows,
        }
    }

    pub fn markdown(&self) -> String {
        let esc = |s: &String| s.replace('|', "\\|");
        let mut out = format!(
            "| {} |\n",
            self.headers.iter().map(esc).collect::<Vec<_>>().join(" | ")
        );
        out += &format!("|{}\n", "---|".repeat(self.headers.len()));
        for row in &self.rows {
            out += &format!(
                "| {} |\n",
                row.iter().map(esc).collect::<Vec<_>>().join(" | ")
            );
        }
        out
    }

    /// Columns padded to their widest cell, for a terminal.
    pub fn aligned(&self) -> String {
        let widths: Vec<usize> = (0..self.headers.len())
            .map(|i| {
                self.rows
                    .iter()
                    .map(|r| r[i].chars().count())
                    .chain([self.headers[i].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &[String]| {
            let padded: Vec<String> = cells
                .iter()
                .zip(&widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect();
            padded.join("  ").trim_end().to_string() + "\n"
        };
        let mut out = line(&self.headers);
        for row in &self.rows {
            out += &line(row);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::reading;
    use super::super::reading::Reference;
    use super::*;

    #[test]
    fn paired_row_shows_ratio_separation_and_comparator() {
        let t = Table::of(&[reading("8192^3", &[1.0, 1.0, 1.0], Some(&[2.0, 2.0, 2.0]))]);
        let row = &t.rows[0];
        let col = |name: &str| &row[t.headers.iter().position(|h| h == name).unwrap()];
        assert_eq!(col("shape"), "8192^3");
        assert_eq!(col("speed ratio"), "2.000x");
        assert_eq!(col("separation"), "separated (candidate faster)");
        assert_eq!(col("comparator p50 us"), "2.00");
        assert_eq!(col("throughput"), "2000.0 GB/s");
        assert_eq!(col("flags"), "ok");
    }

    #[test]
    fn single_row_shows_percent_of_reference_and_flags() {
        let mut r = reading("64 MiB", &[1.0, 1.0], None);
        r.reference = Some(Reference {
            label: "torch copy 4.26 TB/s".into(),
            value: 4260.0,
        });
        r.mark_wrong("dst != src");
        let t = Table::of(&[r]);
        let col = |name: &str| t.rows[0][t.headers.iter().position(|h| h == name).unwrap()].clone();
        assert_eq!(col("% of reference"), "46.9%");
        assert_eq!(col("comparator"), "torch copy 4.26 TB/s");
        assert_eq!(col("speed ratio"), "-");
        assert_eq!(col("flags"), "WRONG: dst != src");
    }

    #[test]
    fn markdown_has_a_header_rule_and_escapes_pipes() {
        let mut r = reading("a|b", &[1.0], None);
        r.label = "a|b".into();
        let md = Table::of(&[r]).markdown();
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[1].starts_with("|---|"));
        assert!(lines[2].starts_with("| a\\|b |"));
    }

    #[test]
    fn aligned_columns_line_up() {
        let t = Table::of(&[
            reading("short", &[1.0], None),
            reading("a much longer label", &[1.0], None),
        ]);
        let text = t.aligned();
        let lines: Vec<&str> = text.lines().collect();
        let dtype_column = lines[0].find("dtype").unwrap();
        assert!(
            lines[1..]
                .iter()
                .all(|l| l.find("bf16") == Some(dtype_column)),
            "{text}"
        );
    }
}
