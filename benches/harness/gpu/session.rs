//! A bench run on the GPU: command line, evidence folder, device facts, SM clocks, the
//! timer, and the two ways to take a reading: [`Session::measure`] (one arm, judged against a
//! fixed reference) and [`Session::compare`] (paired ABBA windows against a comparator).

use super::copy::{size_label, CopyWorkload, DRIVER_COPY};
use super::driver::{self, Result};
use super::nvml::{read_clock, Nvml};
use super::record::Record;
use super::timer::{Identity, Timer, Workload};
use crate::harness::host::artifacts::{self, Baseline};
use crate::harness::host::cli::{self, Command, Options};
use crate::harness::host::compare::{candidate_beats_at_p50_and_p95, Comparison};
use crate::harness::host::evidence::{utc_stamp, EvidenceDir};
use crate::harness::host::reading::{ComparatorArm, Reading, Reference};
use crate::harness::host::rotation::Residency;
use crate::harness::host::schedule::{Arm, PairedPlan};
use crate::harness::host::stamp::{Clock, Route, Stamp};
use crate::harness::host::stats::Summary;
use cubins::runtime::{ArtifactKind, Gpu};
use cust::sys::CUdevice_attribute as A;
use std::process::ExitCode;
use std::time::SystemTime;

/// Windows aim for this long (quick mode: half), long enough that event resolution and
/// launch gaps at the window edges are noise.
const TARGET_WINDOW_US: f64 = 4000.0;

pub struct Session<'g> {
    pub options: Options,
    pub gpu: &'g Gpu,
    pub timer: Timer,
    pub l2_bytes: u64,
    pub record: Record,
    max_clock_mhz: Option<u32>,
    nvml: Option<Nvml>,
    nvml_error: Option<String>,
    baseline_opened: bool,
}

/// The route of one of this crate's kernels, as the STAMP line states it.
pub fn route_of(r: &cubins::runtime::Route) -> Route {
    Route::Artifact {
        arch: r.arch.to_string(),
        kind: match r.kind {
            ArtifactKind::Cubin => "cubin".into(),
            ArtifactKind::PtxJit => "PTX".into(),
        },
        sha256: r.sha256.to_string(),
        fallback: r.is_fallback(),
        origin: "embedded".into(),
    }
}

/// Runs a bench: parses the command line, opens the GPU, runs `body`, writes the evidence.
/// Exit code 0 only when the run is clean and every check passed; 2 for bad usage.
pub fn main(bench: &'static str, body: impl FnOnce(&mut Session<'_>) -> Result<()>) -> ExitCode {
    let args = std::env::args().skip(1);
    let options = match cli::parse(args, std::env::var(cli::RESULTS_ENV).ok()) {
        Ok(Command::Run(o)) => o,
        Ok(Command::Help) => {
            println!("{bench}: a cubins benchmark\n\n{}", cli::USAGE);
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("{bench}: {e}\n\n{}", cli::USAGE);
            return ExitCode::from(2);
        }
    };
    if let Some(dir) = &options.dump_artifacts {
        return match artifacts::embedded().and_then(|a| artifacts::dump(dir, &a).map(|_| a.len())) {
            Ok(n) => {
                println!(
                    "{bench}: wrote {n} artifacts and {} to {}",
                    artifacts::INDEX,
                    dir.display()
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{bench}: --dump-artifacts: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let now = SystemTime::now();
    let evidence = match EvidenceDir::create(&options.results_root, bench, now) {
        Ok(e) => e,
        Err(e) => {
            eprintln!(
                "{bench}: cannot create a run folder under {}: {e}",
                options.results_root.display()
            );
            return ExitCode::from(2);
        }
    };
    let mut record = Record::new(bench, evidence, utc_stamp(now));
    record.say(format!("== {bench} ({}) ==", utc_stamp(now)));
    record.fact("options", format!("{options:?}"));
    let info = cubins::build_info();
    record.fact(
        "build",
        format!("toolkit {}, arches {}", info.toolkit, info.archs.join(", ")),
    );

    let gpu = match Gpu::new() {
        Ok(g) => g,
        Err(e) => {
            record.mark_wrong(format!("no GPU run: {e}"));
            return exit(record);
        }
    };
    let device = match DeviceSetup::open(&options, &gpu) {
        Ok(d) => d,
        Err(e) => {
            record.mark_wrong(format!("harness setup failed: {e}"));
            return exit(record);
        }
    };
    let (nvml, nvml_error) = match device.nvml {
        Ok(n) => (Some(n), None),
        Err(e) => (None, Some(e)),
    };
    let mut session = Session {
        options,
        gpu: &gpu,
        timer: device.timer,
        l2_bytes: device.l2_bytes,
        record,
        max_clock_mhz: device.max_clock_mhz,
        nvml,
        nvml_error,
        baseline_opened: false,
    };
    session.announce();
    if let Err(e) = body(&mut session) {
        session.record.mark_wrong(format!("bench stopped: {e}"));
    }
    if session.options.baseline_artifacts.is_some() && !session.baseline_opened {
        session
            .record
            .mark_wrong("--baseline-artifacts was given, but this bench has no baseline arm");
    }
    let fallbacks = cubins::runtime::ptx_fallbacks();
    session.record.fact(
        "PTX fallback module loads (runtime counter)",
        fallbacks.to_string(),
    );
    exit(session.record)
}

/// What a session needs from the device besides the runtime's `Gpu`.
struct DeviceSetup {
    timer: Timer,
    l2_bytes: u64,
    max_clock_mhz: Option<u32>,
    nvml: Result<Nvml>,
}

impl DeviceSetup {
    fn open(options: &Options, gpu: &Gpu) -> Result<DeviceSetup> {
        let cu_dev = driver::device(gpu.device().ordinal)?;
        let l2_bytes =
            driver::attribute(cu_dev, A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?.max(0) as u64;
        let max_clock_mhz = driver::attribute(cu_dev, A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
            .ok()
            .map(|khz| (khz / 1000) as u32);
        let nvml = driver::pci_bus_id(cu_dev).and_then(|bus| Nvml::open(&bus));
        let stream = gpu.stream().map_err(|e| e.to_string())?;
        if !driver::current_is_primary(cu_dev)? {
            return Err(
                "the current context is not the device's primary context, which cuBLAS would use"
                    .into(),
            );
        }
        let target = if options.quick {
            TARGET_WINDOW_US / 2.0
        } else {
            TARGET_WINDOW_US
        };
        let timer = Timer::new(stream, options.graph, target)?;
        Ok(DeviceSetup {
            timer,
            l2_bytes,
            max_clock_mhz,
            nvml,
        })
    }
}

fn exit(record: Record) -> ExitCode {
    if record.finish() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

impl<'g> Session<'g> {
    fn announce(&mut self) {
        let dev = self.gpu.device();
        let gpu = format!(
            "{} (cc {}.{}, {} SMs, L2 {} MiB, driver API {})",
            dev.name,
            dev.cc / 10,
            dev.cc % 10,
            dev.sm_count,
            self.l2_bytes >> 20,
            dev.driver_version
        );
        self.record.fact("gpu", gpu);
        self.record.fact(
            "context",
            "device primary context, current on this thread (shared with cuBLAS)",
        );
        let clock_source = match &self.nvml {
            Some(n) => format!(
                "NVML SM clock (driver {})",
                n.driver.as_deref().unwrap_or("?")
            ),
            None => format!(
                "max clock attribute, not the current clock (NVML unavailable: {})",
                self.nvml_error.as_deref().unwrap_or("?")
            ),
        };
        self.record.fact("clock source", clock_source);
        let timing = format!(
            "{}, windows of ~{} us, CUDA events",
            self.timer.mode(),
            self.timer.target_window_us
        );
        self.record.fact("timing", timing);
        let clock = self.clock();
        self.record.fact("sm clock at start", clock.to_string());
    }

    /// The other build's artifacts from `--baseline-artifacts`, if given (a bench that
    /// supports a baseline arm calls this; one that does not is marked WRONG when given it).
    pub fn baseline(&mut self) -> Result<Option<Baseline>> {
        let Some(dir) = self.options.baseline_artifacts.clone() else {
            return Ok(None);
        };
        self.baseline_opened = true;
        let b = Baseline::open(&dir)?;
        self.record.fact(
            "baseline artifacts",
            format!("{} ({} artifacts)", dir.display(), b.records.len()),
        );
        Ok(Some(b))
    }

    pub fn clock(&self) -> Clock {
        read_clock(self.nvml.as_ref(), self.max_clock_mhz)
    }

    pub fn say(&mut self, line: impl AsRef<str>) {
        self.record.say(line)
    }

    pub fn check(&mut self, what: impl Into<String>, pass: bool, detail: impl Into<String>) {
        self.record.check(what, pass, detail)
    }

    fn stamp(
        &self,
        id: &Identity,
        comparator: &str,
        start: Clock,
        end: Clock,
        timing: String,
    ) -> Stamp {
        Stamp {
            kernel: id.kernel.clone(),
            route: id.route.clone(),
            toolkit: id.toolkit.clone(),
            geometry: id.geometry,
            dtype: id.dtype.clone(),
            shape: id.shape.clone(),
            comparator: comparator.to_string(),
            gpu: self.gpu.device().name.to_string(),
            sm_clock_start: start,
            sm_clock_end: end,
            timing,
        }
    }

    fn timing(&self, w: &dyn Workload, windows: usize, launches: usize) -> String {
        let plan = w.rotation();
        format!(
            "{} {windows}x{launches} launches, {} sets ({} MiB rotated, L2 {} MiB)",
            self.timer.mode(),
            plan.sets,
            plan.footprint_bytes() >> 20,
            self.l2_bytes >> 20
        )
    }

    fn verify(&self, w: &mut dyn Workload, reading: &mut Reading, arm: &str) {
        if let Err(e) = w.verify(&self.timer.stream) {
            reading.mark_wrong(format!("{arm} output check failed: {e}"));
        }
    }

    fn log_reading(&mut self, r: &Reading) {
        self.say(&r.stamp_line);
        let s = &r.summary;
        let mut line = format!(
            "  {}: p50 {:.2} us, p95 {:.2}, min {:.2}, max {:.2}",
            r.label, s.p50, s.p95, s.min, s.max
        );
        if let (Some(t), Some(w)) = (r.throughput(), r.work) {
            line += &format!(", {t:.1} {}", w.unit());
        }
        if let Some(f) = r.fraction_of_reference() {
            line += &format!(
                ", {:.1}% of {}",
                f * 100.0,
                r.reference.as_ref().map(|x| x.label.as_str()).unwrap_or("")
            );
        }
        if let Some(c) = &r.comparator {
            let cmp = &c.comparison;
            line += &format!(
                "; comparator p50 {:.2} us; speed ratio {:.3}x; {}{}",
                cmp.comparator.p50,
                cmp.speed_ratio,
                cmp.separation,
                if c.extended {
                    " (extended to 101 windows)"
                } else {
                    ""
                }
            );
        }
        for f in &r.flags {
            line += &format!(" [{f:?}]");
        }
        self.say(line);
    }

    /// One arm alone: windows of `w`, judged against a fixed `reference` (if any).
    pub fn measure(
        &mut self,
        label: &str,
        w: &mut dyn Workload,
        reference: Option<Reference>,
    ) -> Result<()> {
        let start = self.clock();
        let windows = PairedPlan::STANDARD.base_windows;
        let mut armed = self.timer.arm(w)?;
        let samples = (0..windows)
            .map(|_| self.timer.window(&mut armed))
            .collect::<Result<Vec<f64>>>()?;
        let launches = armed.launches_per_window;
        drop(armed);
        let end = self.clock();
        let summary = Summary::of(&samples).ok_or("a window gave no finite time")?;
        let comparator = reference
            .as_ref()
            .map(|r| r.label.clone())
            .unwrap_or_else(|| "none".into());
        let stamp = self.stamp(
            w.identity(),
            &comparator,
            start,
            end,
            self.timing(w, windows, launches),
        );
        let mut reading = Reading {
            label: label.to_string(),
            stamp_line: stamp.to_string(),
            stamp,
            samples_us: samples,
            summary,
            launches_per_window: launches,
            work: w.work(),
            comparator: None,
            reference,
            flags: Vec::new(),
        };
        self.verify(w, &mut reading, "candidate");
        reading.flag_fallback_routes();
        self.log_reading(&reading);
        self.record.readings.push(reading);
        Ok(())
    }

    /// Paired alternating windows of `candidate` against `comparator` (order from the command
    /// line): 21 per arm, extended to 101 when the candidate beats it at p50 and p95.
    pub fn compare(
        &mut self,
        label: &str,
        candidate: &mut dyn Workload,
        comparator: &mut dyn Workload,
    ) -> Result<()> {
        let start = self.clock();
        let plan = PairedPlan::STANDARD;
        let order = self.options.order;
        let mut a = self.timer.arm(candidate)?;
        let mut b = self.timer.arm(comparator)?;
        let (mut sa, mut sb) = (Vec::new(), Vec::new());
        let mut target = plan.base_windows;
        let mut extended = false;
        let mut pair = 0;
        loop {
            while pair < target {
                for arm in order.pair(pair) {
                    match arm {
                        Arm::Candidate => sa.push(self.timer.window(&mut a)?),
                        Arm::Comparator => sb.push(self.timer.window(&mut b)?),
                    }
                }
                pair += 1;
            }
            let (ca, cb) = (Summary::of(&sa), Summary::of(&sb));
            let beats =
                matches!((&ca, &cb), (Some(x), Some(y)) if candidate_beats_at_p50_and_p95(x, y));
            if !extended && beats && target < plan.extended_windows {
                extended = true;
                target = plan.extended_windows;
                continue;
            }
            break;
        }
        let (la, lb) = (a.launches_per_window, b.launches_per_window);
        drop((a, b));
        let end = self.clock();
        let summary = Summary::of(&sa).ok_or("a candidate window gave no finite time")?;
        let comp_summary = Summary::of(&sb).ok_or("a comparator window gave no finite time")?;
        let name = comparator.identity().name.clone();
        let stamp = self.stamp(
            candidate.identity(),
            &name,
            start,
            end,
            self.timing(candidate, sa.len(), la),
        );
        let comp_stamp = self.stamp(
            comparator.identity(),
            &name,
            start,
            end,
            self.timing(comparator, sb.len(), lb),
        );
        let mut reading = Reading {
            label: label.to_string(),
            stamp_line: stamp.to_string(),
            stamp,
            samples_us: sa,
            summary,
            launches_per_window: la,
            work: candidate.work(),
            comparator: Some(ComparatorArm {
                stamp: comp_stamp,
                samples_us: sb,
                comparison: Comparison::of(summary, comp_summary),
                order,
                extended,
            }),
            reference: None,
            flags: Vec::new(),
        };
        self.verify(candidate, &mut reading, "candidate");
        self.verify(comparator, &mut reading, "comparator");
        reading.flag_fallback_routes();
        if let Some(c) = &reading.comparator {
            self.say(c.stamp.to_string().replacen("STAMP", "STAMP comparator", 1));
        }
        self.log_reading(&reading);
        self.record.readings.push(reading);
        Ok(())
    }

    /// Measures the copy ceiling: this build's `copy_vec16` over `bytes`, streamed, paired
    /// with the driver's device copy, as a reading of its own; returns the faster of the two
    /// as the reference for memory-bound readings of the same run. Their "% of reference" is
    /// then % of the best device copy measured minutes apart on the same GPU, not a number
    /// from another day.
    pub fn copy_ceiling(&mut self, bytes: u64) -> Result<Reference> {
        let (l2, label) = (self.l2_bytes, size_label(bytes));
        let mut kernel = CopyWorkload::new(self.gpu, bytes, l2, Residency::Streamed, 0xCE11)?;
        let mut driver = CopyWorkload::driver(self.gpu, bytes, l2, Residency::Streamed, 0xCE11)?;
        self.compare(&format!("copy ceiling {label}"), &mut kernel, &mut driver)?;
        let r = self
            .readings()
            .last()
            .ok_or("the copy ceiling gave no reading")?;
        if !r.is_clean() {
            return Err(format!("the copy ceiling reading is flagged {:?}", r.flags));
        }
        let own = r.throughput().ok_or("the copy ceiling has no throughput")?;
        let theirs = r
            .comparator_throughput()
            .ok_or("the copy ceiling has no driver throughput")?;
        let (gbps, by) = if own >= theirs {
            (own, "copy_vec16")
        } else {
            (theirs, DRIVER_COPY)
        };
        Ok(Reference {
            label: format!("best device copy {gbps:.0} GB/s ({by}, this run)"),
            value: gbps,
        })
    }

    /// The readings so far (benches compute their checks from them).
    pub fn readings(&self) -> &[Reading] {
        &self.record.readings
    }
}
