//! Command line of every bench binary. The results root comes from `--results DIR`, else
//! `$CUBINS_BENCH_RESULTS`, else `./bench-results`; each run makes its own folder in it.

use super::schedule::Order;
use std::path::PathBuf;

pub const RESULTS_ENV: &str = "CUBINS_BENCH_RESULTS";
pub const DEFAULT_RESULTS: &str = "bench-results";

pub const USAGE: &str = "\
options:
  --results DIR              results root; the run writes DIR/<bench>-<utc time>/
                             (default: $CUBINS_BENCH_RESULTS, else ./bench-results)
  --quick                    fewer shapes and shorter windows (same protocol)
  --graph                    time CUDA-graph replay of each window instead of eager launches
  --order abba|baab          which arm opens the paired windows (default abba)
  --dump-artifacts DIR       write this build's embedded cubins/PTX and artifacts.json to DIR, then exit
  --baseline-artifacts DIR   compare against another build's artifacts (from --dump-artifacts)
                             in the same process, where the bench supports it
  --help                     this text";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub results_root: PathBuf,
    pub quick: bool,
    pub graph: bool,
    pub order: Order,
    pub dump_artifacts: Option<PathBuf>,
    pub baseline_artifacts: Option<PathBuf>,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    Run(Options),
    Help,
}

/// Parses the arguments after the program name. `env_results` is `$CUBINS_BENCH_RESULTS`.
pub fn parse(
    args: impl IntoIterator<Item = String>,
    env_results: Option<String>,
) -> Result<Command, String> {
    let mut o = Options {
        results_root: env_results
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| DEFAULT_RESULTS.into()),
        quick: false,
        graph: false,
        order: Order::Abba,
        dump_artifacts: None,
        baseline_artifacts: None,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = |what: &str| -> Result<String, String> {
            inline
                .clone()
                .or_else(|| args.next())
                .filter(|v| !v.is_empty())
                .ok_or_else(|| format!("{flag} needs {what}"))
        };
        match flag.as_str() {
            "--results" => o.results_root = value("a folder")?.into(),
            "--quick" => o.quick = true,
            "--graph" => o.graph = true,
            "--order" => {
                o.order = match value("abba or baab")?.to_ascii_lowercase().as_str() {
                    "abba" => Order::Abba,
                    "baab" => Order::Baab,
                    other => return Err(format!("--order takes abba or baab, not {other:?}")),
                }
            }
            "--dump-artifacts" => o.dump_artifacts = Some(value("a folder")?.into()),
            "--baseline-artifacts" => o.baseline_artifacts = Some(value("a folder")?.into()),
            // `cargo bench` passes `--bench` to harness-less targets.
            "--bench" => {}
            "--help" | "-h" => return Ok(Command::Help),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Command::Run(o))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str], env: Option<&str>) -> Result<Options, String> {
        match parse(args.iter().map(|s| s.to_string()), env.map(String::from))? {
            Command::Run(o) => Ok(o),
            Command::Help => Err("help".into()),
        }
    }

    #[test]
    fn defaults_then_env_then_flag_choose_the_results_root() {
        assert_eq!(
            run(&[], None).unwrap().results_root,
            PathBuf::from("bench-results")
        );
        assert_eq!(
            run(&[], Some("")).unwrap().results_root,
            PathBuf::from("bench-results")
        );
        assert_eq!(
            run(&[], Some("/r/env")).unwrap().results_root,
            PathBuf::from("/r/env")
        );
        assert_eq!(
            run(&["--results", "/r/flag"], Some("/r/env"))
                .unwrap()
                .results_root,
            PathBuf::from("/r/flag")
        );
        assert_eq!(
            run(&["--results=/r/eq"], None).unwrap().results_root,
            PathBuf::from("/r/eq")
        );
    }

    #[test]
    fn switches_and_cargo_bench_flag() {
        let o = run(&["--bench", "--quick", "--graph", "--order", "BAAB"], None).unwrap();
        assert!(o.quick && o.graph);
        assert_eq!(o.order, Order::Baab);
        let o = run(
            &["--baseline-artifacts", "old", "--dump-artifacts=new"],
            None,
        )
        .unwrap();
        assert_eq!(o.baseline_artifacts, Some(PathBuf::from("old")));
        assert_eq!(o.dump_artifacts, Some(PathBuf::from("new")));
    }

    #[test]
    fn bad_input_is_a_clear_error() {
        assert_eq!(
            run(&["--results"], None).unwrap_err(),
            "--results needs a folder"
        );
        assert_eq!(
            run(&["--order", "aabb"], None).unwrap_err(),
            "--order takes abba or baab, not \"aabb\""
        );
        assert_eq!(
            run(&["stray"], None).unwrap_err(),
            "unknown argument \"stray\""
        );
        assert_eq!(run(&["--help"], None).unwrap_err(), "help");
    }
}
