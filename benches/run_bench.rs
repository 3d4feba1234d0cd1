//! `run_bench [--results DIR] [BENCH...]`: the table of the newest run of each bench under
//! the results root (% of the reference, or speed ratio to the comparator, per shape), with
//! its status and whether its SHA256SUMS verifies. No GPU needed.

mod harness;

use harness::host::cli::{DEFAULT_RESULTS, RESULTS_ENV};
use harness::host::runs::{benches_under, load, runs_of};
use harness::host::table::Table;
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut root = std::env::var(RESULTS_ENV)
        .ok()
        .filter(|s| !s.is_empty())
        .map(PathBuf::from);
    let mut benches = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--results" => match args.next() {
                Some(dir) => root = Some(dir.into()),
                None => {
                    eprintln!("run_bench: --results needs a folder");
                    return ExitCode::from(2);
                }
            },
            "--bench" => {}
            "--help" | "-h" => {
                println!(
                    "run_bench [--results DIR] [BENCH...]: tables of the newest run of each bench"
                );
                return ExitCode::SUCCESS;
            }
            other if other.starts_with('-') => {
                eprintln!("run_bench: unknown argument {other:?}");
                return ExitCode::from(2);
            }
            bench => benches.push(bench.to_string()),
        }
    }
    let root = root.unwrap_or_else(|| DEFAULT_RESULTS.into());
    if benches.is_empty() {
        match benches_under(&root) {
            Ok(b) if !b.is_empty() => benches = b,
            Ok(_) => {
                eprintln!("run_bench: no bench runs under {}", root.display());
                return ExitCode::FAILURE;
            }
            Err(e) => {
                eprintln!("run_bench: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let mut ok = true;
    for bench in &benches {
        let newest = runs_of(&root, bench).map(|r| r.last().cloned());
        let run = match newest {
            Ok(Some(dir)) => load(&dir),
            Ok(None) => Err(format!("no run of {bench} under {}", root.display())),
            Err(e) => Err(e),
        };
        match run {
            Ok(run) => {
                let manifest = match &run.manifest {
                    Ok(()) => "SHA256SUMS verifies".to_string(),
                    Err(p) => format!("SHA256SUMS FAILS: {}", p.join("; ")),
                };
                ok &= run.manifest.is_ok() && run.status == "OK";
                println!(
                    "== {bench}: {} ({}; {manifest})",
                    run.dir.display(),
                    run.status
                );
                print!("{}", Table::of(&run.readings).aligned());
                println!();
            }
            Err(e) => {
                ok = false;
                eprintln!("run_bench: {e}");
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
