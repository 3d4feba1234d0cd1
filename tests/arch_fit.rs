//! Every launch a selector can choose, on every supported arch, checked against that arch's
//! cubin with the crate's own occupancy model (no GPU needed): for each op x arch x shape
//! class the route the runtime would take, the entry point it launches, its dynamic shared
//! memory (the kernel's ring on that arch, as the manifest declares it), and how many blocks
//! of it an SM holds. Arches this build did not compile are named in one loud line.

mod gemm_common;

use cubins::runtime::{select, ArtifactKind, RoutePolicy};
use cubins_build::arch::{Arch, SUPPORTED};
use cubins_build::manifest::Manifest;
use cubins_build::model::KernelReport;
use cubins_build::occupancy::{self, Carveout, KernelResources};
use cubins_build::schema::ReportsFile;
use gemm_common::plan::{self, Choice, DeviceFacts, Layout, Problem, Schedule, SmemClass, Tier};
use std::collections::BTreeSet;

/// SMs of a representative GPU of each compute capability (the selector's wave arithmetic).
fn sm_count(cc: u32) -> u32 {
    match cc {
        80 => 108,  // A100
        86 => 84,   // RTX A6000 / 3090
        89 => 128,  // RTX 4090
        90 => 132,  // H100 / H200
        100 => 148, // B200
        _ => 170,   // RTX 5090
    }
}

/// Schedules that hold one block per SM on purpose, with why (every other choice must keep
/// at least two resident).
const ONE_BLOCK: &[(&str, &str)] = &[
    (
        "_128x256",
        "8 warps of 64 x 64 accumulators: 232-255 registers x 256 threads fill the register file",
    ),
    (
        "_tf32_nn_128x128",
        "8 warps at 162-168 registers x 256 threads: 43 K of the 64 K registers",
    ),
    (
        "_tf32_tn_128x128",
        "8 warps at 162-168 registers x 256 threads: 43 K of the 64 K registers",
    ),
    (
        "_tf32_nt_128x128",
        "8 warps at 151-167 registers x 256 threads: 39-43 K of the 64 K registers",
    ),
    (
        "_decode_n32w24",
        "24 warps per block: 768 threads at 80 registers, built for one block per SM",
    ),
    (
        "_decode_n32w16",
        "16 warps per block: 512 threads at up to 128 registers, built for one block per SM",
    ),
    (
        "_decode_n128w8",
        "the ring walk's 72 KB ring: one block per SM of 100 KB (sm_86, sm_89, sm_120)",
    ),
];

struct Build {
    reports: ReportsFile,
    manifest: Manifest,
}

impl Build {
    fn load() -> Option<Build> {
        if let Some(reason) = cubins::build_info().without_kernels {
            eprintln!("\n!!! SKIPPED: the arch fit checks need the kernels, and this build has none ({reason}) !!!\n");
            return None;
        }
        let text = std::fs::read_to_string(cubins::REPORTS_JSON).expect("the build's reports.json");
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        Some(Build {
            reports: serde_json::from_str(&text).expect("reports.json"),
            manifest: Manifest::load(&root.join("cuda/kernels.toml")).expect("kernels.toml"),
        })
    }

    /// The report of `entry` in the cubin of `arch` of kernel file `file`.
    fn kernel(&self, file: &str, arch: &str, entry: &str) -> &KernelReport {
        self.reports
            .files
            .iter()
            .filter(|f| f.name == file)
            .flat_map(|f| &f.cubins)
            .filter(|c| c.report.arch.sm_name() == arch)
            .flat_map(|c| &c.report.kernels)
            .find(|k| k.mangled == entry)
            .unwrap_or_else(|| panic!("no {entry} in the {arch} cubin of {file}"))
    }

    /// The compute capabilities (devices) whose every kernel file has a cubin in this build.
    fn devices(&self) -> Vec<u32> {
        let built: BTreeSet<Arch> = self
            .reports
            .files
            .iter()
            .flat_map(|f| f.cubins.iter().map(|c| c.report.arch))
            .collect();
        let ccs: BTreeSet<u32> = SUPPORTED.iter().map(|a| a.cc).collect();
        let (have, missing): (Vec<u32>, Vec<u32>) = ccs
            .into_iter()
            .partition(|cc| built.contains(&Arch::new(*cc)));
        if !missing.is_empty() {
            let names: Vec<String> = missing.iter().map(|cc| format!("sm_{cc}")).collect();
            eprintln!(
                "\n!!! NOT CHECKED: {} (not in this build; `CUBINS_ARCHS=all` builds every arch) !!!\n",
                names.join(", ")
            );
        }
        have
    }
}

/// A launch the way the runtime would make it on a device of `cc`: route, entry, threads,
/// dynamic shared memory; checked against that cubin.
fn check_launch(b: &Build, cc: u32, entry: &str, threads: u32, smem: u32, what: &str) -> u32 {
    check_launch_with(b, cc, entry, threads, smem, true, what)
}

/// As [`check_launch`]; `fixed_smem`: the kernel's shared memory is its ring, which
/// kernels.toml declares per arch (else it grows with the shape).
fn check_launch_with(
    b: &Build,
    cc: u32,
    entry: &str,
    threads: u32,
    smem: u32,
    fixed_smem: bool,
    what: &str,
) -> u32 {
    let (file, _) = cubins::find_entry_point(entry).unwrap();
    let route = select(file, cc, RoutePolicy::Auto).unwrap();
    assert_eq!(
        route.kind,
        ArtifactKind::Cubin,
        "{what}: sm_{cc} takes a cubin"
    );
    let k = b.kernel(file.name, route.arch, entry);
    if let Some(max) = k.max_threads_per_block {
        assert!(
            threads <= max,
            "{what}: {threads} threads, the {} cubin allows {max}",
            route.arch
        );
    }
    if fixed_smem {
        let want = b.manifest.kernels[entry].dynamic_smem_on(route.arch);
        assert_eq!(
            smem, want,
            "{what}: dynamic shared memory against kernels.toml on {}",
            route.arch
        );
    }
    let arch = Arch::parse(route.arch).unwrap();
    let limits = occupancy::limits_for(arch).expect("limits for every supported arch");
    let res = KernelResources {
        registers: k.registers.value,
        static_smem_bytes: k.smem_bytes.value,
        barriers: k.barriers.unwrap_or(0),
        max_threads_per_block: k.max_threads_per_block,
    };
    let o = limits.occupancy(&res, threads, smem, Carveout::Default);
    assert!(
        o.blocks_per_sm >= 1,
        "{what}: {entry} does not fit an SM of {} ({threads} threads, {smem} B dynamic smem, {} registers)",
        route.arch,
        k.registers.value
    );
    o.blocks_per_sm
}

fn gemm_problem(tier: Tier, layout: Layout, m: u32, n: u32, k: u32, odd_ld: bool) -> Problem {
    let pad = u32::from(odd_ld);
    let (lda, ldb) = (
        if layout.a_k_major() { k } else { m } + pad,
        if layout.b_k_major() { k } else { n } + pad,
    );
    Problem {
        tier,
        layout,
        m,
        n,
        k,
        lda,
        ldb,
        ldc: n + pad,
        out: tier.input(),
        a_addr: 0,
        b_addr: 1 << 30,
        c_addr: 2 << 30,
        workspace: None,
    }
}

/// Shape classes: decode, skinny, a partial wave, a full one, tails with odd leading
/// dimensions, tiny, tall.
const SHAPES: &[(u32, u32, u32, bool)] = &[
    (1, 4096, 4096, false),
    (16, 14336, 4096, false),
    (64, 4096, 4096, false),
    (128, 8192, 8192, false),
    (512, 768, 384, false),
    (1024, 1024, 1024, false),
    (4096, 4096, 4096, false),
    (77, 1000, 999, true),
    (1, 1, 1, false),
    (16384, 64, 64, false),
];

#[test]
fn every_gemm_choice_fits_its_arch() {
    let Some(b) = Build::load() else { return };
    let mut checked = 0;
    for cc in b.devices() {
        let arch = Arch::new(cc);
        let limits = occupancy::limits_for(arch).unwrap();
        let wgmma_routes: &[bool] = if cc == 90 { &[false, true] } else { &[false] };
        for &wgmma in wgmma_routes {
            if wgmma && !cubins::build_info().archs.contains(&"sm_90a") {
                eprintln!(
                    "\n!!! NOT CHECKED: the sm_90a route (sm_90a is not in this build) !!!\n"
                );
                continue;
            }
            let device = DeviceFacts {
                sm_count: sm_count(cc),
                max_smem_per_block_optin: limits.smem_per_block_optin,
                wgmma,
                smem_class: SmemClass::of_cc(cc),
            };
            for tier in Tier::ALL {
                for layout in Layout::ALL {
                    for &(m, n, k, odd) in SHAPES {
                        let p = gemm_problem(tier, layout, m, n, k, odd);
                        let what = format!(
                            "sm_{cc} wgmma={wgmma} {tier:?} {layout:?} {m}x{n}x{k} odd={odd}"
                        );
                        let pl = plan::plan(&p, &device, &Choice::default(), false)
                            .unwrap_or_else(|e| panic!("{what}: {e}"));
                        if pl.grid == 0 {
                            continue;
                        }
                        if let Schedule::Wgmma(_) = pl.schedule {
                            let (file, _) = cubins::find_entry_point(&pl.entry).unwrap();
                            let r = select(file, cc, RoutePolicy::Auto).unwrap();
                            assert_eq!(
                                r.arch, "sm_90a",
                                "{what}: wgmma chosen off the sm_90a route"
                            );
                        }
                        let blocks =
                            check_launch(&b, cc, &pl.entry, pl.block, pl.dynamic_smem_bytes, &what);
                        let one_block_ok =
                            ONE_BLOCK.iter().any(|(tile, _)| pl.entry.contains(tile))
                                || matches!(pl.schedule, Schedule::Wgmma(_));
                        assert!(
                            blocks >= 2 || one_block_ok,
                            "{what}: {} holds {blocks} block(s) per SM",
                            pl.entry
                        );
                        checked += 1;
                    }
                }
            }
            // Every tile the class offers fits this arch when forced.
            for tier in Tier::ALL {
                for layout in Layout::ALL {
                    for s in plan::schedules(tier, layout, device.smem_class) {
                        if matches!(s, Schedule::Wgmma(_)) && !wgmma {
                            continue;
                        }
                        let p = gemm_problem(tier, layout, 8, 4096, 4096, false);
                        let choice = Choice {
                            schedule: Some(s),
                            grid: None,
                            splits: None,
                        };
                        let Ok(pl) = plan::plan(&p, &device, &choice, false) else {
                            continue;
                        };
                        let what = format!("sm_{cc} {tier:?} {layout:?} forced {}", pl.entry);
                        check_launch(&b, cc, &pl.entry, pl.block, pl.dynamic_smem_bytes, &what);
                        checked += 1;
                    }
                }
            }
        }
    }
    println!("{checked} GEMM launches checked against their arch's cubin");
    assert!(checked > 0 || b.devices().is_empty());
}

#[cfg(feature = "cust")]
#[test]
fn every_row_geometry_fits_its_arch() {
    use cubins::ops::rows::{RowGeometry, RowKernel, Threads};
    use cubins::ops::{layernorm, rmsnorm, softmax, swiglu};
    use cubins::runtime::{Bf16, F16};

    let Some(b) = Build::load() else { return };
    let cols_classes = [1usize, 7, 768, 4096, 4097, 14336, 32768, 65536, 1 << 17];
    let mut checked = 0;
    fn each<T: cubins::runtime::launchers::Dtype>(
        b: &Build,
        cc: u32,
        kernel: &RowKernel,
        cols: usize,
        checked: &mut u32,
    ) {
        let entry = format!("{}_{}", kernel.name, T::NAME);
        let (file, _) = cubins::find_entry_point(&entry).unwrap();
        let route = select(file, cc, RoutePolicy::Auto).unwrap();
        // The runtime clamps to the loaded kernel's own bound (the RMSNorm and LayerNorm
        // backward builds differ by arch).
        let bound = b
            .kernel(file.name, route.arch, &entry)
            .max_threads_per_block
            .unwrap_or(kernel.max_threads);
        let k = RowKernel {
            max_threads: kernel.max_threads.min(bound),
            ..*kernel
        };
        // Many rows (the fewest threads) and few (spread over more threads).
        let many = RowGeometry::select::<T>(&k, cols, Threads::Auto).unwrap();
        let few = |rows| {
            RowGeometry::select_for::<T>(&k, rows, cols, sm_count(cc), Threads::Auto).unwrap()
        };
        let mut geometries = vec![many, few(1), few(16)];
        if [
            rmsnorm::FWD,
            rmsnorm::FWD_RESIDUAL,
            layernorm::FWD,
            layernorm::FWD_RESIDUAL,
        ]
        .contains(kernel)
        {
            // Many rows as the forward plans them: widened to the warp or short walk.
            let (g, _) = rmsnorm::fwd_row_geometry::<T>(
                &k,
                (1 << 20, cols),
                sm_count(cc),
                route.cc,
                Threads::Auto,
            )
            .unwrap();
            geometries.push(g);
        }
        for g in geometries {
            let smem = match kernel.name {
                n if n == rmsnorm::BWD.name => {
                    rmsnorm::accumulator_bytes::<T>(cols, g.rows_per_block)
                }
                n if n == layernorm::BWD.name => {
                    layernorm::accumulator_bytes::<T>(cols, g.rows_per_block)
                }
                _ => 0,
            };
            let arch = Arch::parse(route.arch).unwrap();
            if u64::from(smem)
                > u64::from(occupancy::limits_for(arch).unwrap().smem_per_block_optin)
            {
                // The op refuses such rows with an Err before launch (accumulators past shared
                // memory), or, on routes that run it, takes the cluster kernel (below).
                continue;
            }
            let what = format!("sm_{cc} {entry} cols={cols} {g:?}");
            check_launch_with(b, cc, &entry, g.threads(), smem, false, &what);
            *checked += 1;
        }
        // The forward norms' cluster twins, where the route runs them: one CTA of a row's
        // cluster at one row and at the most rows the plan splits.
        let forward = [
            rmsnorm::FWD,
            rmsnorm::FWD_RESIDUAL,
            layernorm::FWD,
            layernorm::FWD_RESIDUAL,
        ];
        // `rmsnorm::runs_clusters` of the route this selection makes.
        let clusters = route.kind == cubins::runtime::ArtifactKind::Cubin && route.cc == 90;
        // The backward cluster kernels, where the route runs them: a CTA of a half row, as
        // each plan picks it (RMSNorm: where a whole-row block would hold its SM alone;
        // LayerNorm: where a whole row's accumulators exceed a block's shared memory).
        if clusters && (kernel == &rmsnorm::BWD || kernel == &layernorm::BWD) {
            let limit = occupancy::limits_for(Arch::parse(route.arch).unwrap())
                .unwrap()
                .smem_per_block_optin;
            let half = rmsnorm::half_cols::<T>(cols);
            let cluster = if kernel == &rmsnorm::BWD {
                rmsnorm::cluster_geometry::<T>(Threads::Auto, 1, cols)
                    .map(|g| (g, rmsnorm::accumulator_bytes::<T>(half, g.rows_per_block)))
            } else {
                let whole = layernorm::accumulator_bytes::<T>(cols, 1);
                layernorm::cluster_geometry::<T>(Threads::Auto, whole, limit, cols)
                    .map(|g| (g, layernorm::accumulator_bytes::<T>(half, g.rows_per_block)))
            };
            // Halves past shared memory are refused before launch.
            if let Some((g, smem)) = cluster.filter(|&(_, smem)| smem <= limit) {
                let entry = format!("{}_cluster_{}", kernel.name, T::NAME);
                let what = format!("sm_{cc} {entry} cols={cols} {g:?}");
                check_launch_with(b, cc, &entry, g.threads(), smem, false, &what);
                *checked += 1;
            }
        }
        if forward.contains(kernel) && clusters {
            let entry = format!("{}_cluster_{}", kernel.name, T::NAME);
            for rows in [
                1,
                sm_count(cc) as usize / rmsnorm::FWD_CLUSTER_CTAS as usize,
            ] {
                let Some(g) =
                    rmsnorm::fwd_cluster_geometry::<T>(&k, rows, cols, sm_count(cc), Threads::Auto)
                else {
                    continue;
                };
                let what = format!("sm_{cc} {entry} rows={rows} cols={cols} {g:?}");
                check_launch_with(b, cc, &entry, g.threads(), 0, false, &what);
                *checked += 1;
            }
        }
    }
    for cc in b.devices() {
        for kernel in [
            rmsnorm::FWD,
            rmsnorm::FWD_RESIDUAL,
            rmsnorm::BWD,
            layernorm::FWD,
            layernorm::FWD_RESIDUAL,
            layernorm::BWD,
            softmax::FWD,
            softmax::BWD,
            swiglu::INTERLEAVED,
        ] {
            for &cols in &cols_classes {
                each::<Bf16>(&b, cc, &kernel, cols, &mut checked);
                each::<F16>(&b, cc, &kernel, cols, &mut checked);
                each::<f32>(&b, cc, &kernel, cols, &mut checked);
            }
        }
    }
    println!("{checked} row launches checked against their arch's cubin");
}
