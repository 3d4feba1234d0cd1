//! The record of one bench run: every line it prints (teed into stdout.txt), its readings,
//! its checks and anything that went wrong; `finish` writes and seals the evidence folder.

use crate::harness::host::evidence::{EvidenceDir, RunStatus};
use crate::harness::host::plot::{Chart, Guide, Point};
use crate::harness::host::reading::{Flag, Reading};
use crate::harness::host::table::Table;
use serde::Serialize;
use std::path::PathBuf;

/// A pass/fail verdict a bench states about its readings (a sanity bound, the self-test).
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub what: String,
    pub pass: bool,
    pub detail: String,
}

pub struct Record {
    pub bench: &'static str,
    evidence: EvidenceDir,
    started_utc: String,
    log: String,
    /// Facts about the run (GPU, driver, clocks, options) for readings.json.
    pub facts: Vec<(String, String)>,
    pub readings: Vec<Reading>,
    pub checks: Vec<Check>,
    /// Reasons the whole run is WRONG (a harness error, a fallback counted by the runtime).
    pub wrong: Vec<String>,
    pub chart_y_label: String,
    pub chart_guides: Vec<Guide>,
}

impl Record {
    pub fn new(bench: &'static str, evidence: EvidenceDir, started_utc: String) -> Record {
        Record {
            bench,
            evidence,
            started_utc,
            log: String::new(),
            facts: Vec::new(),
            readings: Vec::new(),
            checks: Vec::new(),
            wrong: Vec::new(),
            chart_y_label: String::new(),
            chart_guides: Vec::new(),
        }
    }

    /// Prints a line and keeps it for stdout.txt.
    pub fn say(&mut self, line: impl AsRef<str>) {
        let line = line.as_ref();
        println!("{line}");
        self.log.push_str(line);
        self.log.push('\n');
    }

    /// Records a fact and prints it.
    pub fn fact(&mut self, key: &str, value: impl Into<String>) {
        let value = value.into();
        self.say(format!("{key}: {value}"));
        self.facts.push((key.to_string(), value));
    }

    pub fn check(&mut self, what: impl Into<String>, pass: bool, detail: impl Into<String>) {
        let c = Check {
            what: what.into(),
            pass,
            detail: detail.into(),
        };
        self.say(format!(
            "CHECK {}: {} ({})",
            if c.pass { "PASS" } else { "FAIL" },
            c.what,
            c.detail
        ));
        self.checks.push(c);
    }

    pub fn mark_wrong(&mut self, why: impl Into<String>) {
        let why = why.into();
        self.say(format!("WRONG: {why}"));
        self.wrong.push(why);
    }

    fn status(&self) -> RunStatus {
        let mut wrong = self.wrong.clone();
        for r in &self.readings {
            for f in &r.flags {
                if let Flag::Wrong(why) = f {
                    wrong.push(format!("{}: {why}", r.label));
                }
            }
        }
        RunStatus {
            wrong,
            fallback: self
                .readings
                .iter()
                .any(|r| r.flags.contains(&Flag::Fallback)),
        }
    }

    fn chart(&self) -> Chart {
        let paired = self.readings.iter().any(|r| r.comparator.is_some());
        let y_label = if !self.chart_y_label.is_empty() {
            self.chart_y_label.clone()
        } else if paired {
            "speed ratio (comparator time / candidate time)".into()
        } else {
            "fraction of reference".into()
        };
        Chart {
            title: format!("{} ({})", self.bench, self.started_utc),
            y_label,
            points: self
                .readings
                .iter()
                .filter_map(|r| {
                    Some(Point {
                        label: format!("{} {}", r.stamp.kernel, r.label),
                        value: r.headline_ratio()?,
                        clean: r.is_clean(),
                    })
                })
                .collect(),
            guides: self
                .chart_guides
                .iter()
                .map(|g| Guide {
                    value: g.value,
                    label: g.label.clone(),
                })
                .collect(),
        }
    }

    fn summary_markdown(&self, status: &RunStatus, table: &Table) -> String {
        let mut md = format!("# {} ({})\n\n", self.bench, self.started_utc);
        md += &format!(
            "Status: **{}**\n\n",
            status.text().trim().replace('\n', "; ")
        );
        let failed = self.checks.iter().filter(|c| !c.pass).count();
        md += &format!(
            "Checks: {} passed, {failed} failed\n\n",
            self.checks.len() - failed
        );
        for c in &self.checks {
            md += &format!(
                "- {} {}: {}\n",
                if c.pass { "PASS" } else { "**FAIL**" },
                c.what,
                c.detail
            );
        }
        md += "\n## Run\n\n";
        for (k, v) in &self.facts {
            md += &format!("- {k}: {v}\n");
        }
        md += "\n## Readings\n\n";
        md += &table.markdown();
        md += "\n## STAMP lines\n\n```\n";
        for r in &self.readings {
            md += &format!("{}\n", r.stamp_line);
            if let Some(c) = &r.comparator {
                md += &format!(
                    "{}\n",
                    c.stamp.to_string().replacen("STAMP", "STAMP comparator", 1)
                );
            }
        }
        md += "```\n\nRaw per-window samples: readings.json. Full output: stdout.txt. Plot: plot.svg.\n";
        md
    }

    /// Writes readings.json, summary.md, plot.svg, stdout.txt and STATUS, seals the folder
    /// with SHA256SUMS and prints where it ended up. True when the run passed: clean, every
    /// check passed, and the folder written.
    pub fn finish(mut self) -> bool {
        let status = self.status();
        let table = Table::of(&self.readings);
        if !self.readings.is_empty() {
            self.say(format!("\n{}", table.aligned()));
        }
        let failed: Vec<&str> = self
            .checks
            .iter()
            .filter(|c| !c.pass)
            .map(|c| c.what.as_str())
            .collect();
        let passed = status.is_ok() && failed.is_empty();
        self.say(format!(
            "RESULT {}: {} readings, {} checks ({} failed), status {}",
            self.bench,
            self.readings.len(),
            self.checks.len(),
            failed.len(),
            status.text().lines().next().unwrap_or("")
        ));
        let json = serde_json::json!({
            "bench": self.bench,
            "started_utc": self.started_utc,
            "facts": self.facts.iter().map(|(k, v)| serde_json::json!({ "key": k, "value": v })).collect::<Vec<_>>(),
            "readings": self.readings,
            "checks": self.checks,
            "wrong": status.wrong,
            "fallback": status.fallback,
        });
        let write = || -> std::io::Result<PathBuf> {
            self.evidence.write(
                "readings.json",
                serde_json::to_string_pretty(&json).unwrap_or_default() + "\n",
            )?;
            self.evidence
                .write("summary.md", self.summary_markdown(&status, &table))?;
            self.evidence.write("plot.svg", self.chart().svg())?;
            self.evidence.write("stdout.txt", &self.log)?;
            Ok(self.evidence.path().to_path_buf())
        };
        let written = write();
        let sealed = written
            .and_then(|_| self.evidence.finish(&status))
            .map_err(|e| format!("writing the evidence folder: {e}"));
        match &sealed {
            Ok(dir) => println!(
                "evidence: {} (verify: cd {} && sha256sum -c SHA256SUMS)",
                dir.display(),
                dir.display()
            ),
            Err(e) => eprintln!("{e}"),
        }
        passed && sealed.is_ok()
    }
}
