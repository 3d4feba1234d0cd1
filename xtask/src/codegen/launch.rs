//! Launch facts that follow from a tile: threads per block and the bytes of the dynamic
//! shared-memory ring, as the kernels take them (`MmaStage` / `WgmmaStage::kSmemBytes`) and
//! the planner computes them (`src/ops/gemm/plan.rs`; this module's test holds the two
//! together), for the manifest fragment.

use super::catalogue::{Layout, MmaTile, Tile};

/// Bytes of one A or B element of `tier`, which the tensor-core rings are sized by.
pub fn input_bytes(tier: &str) -> Result<u32, String> {
    match tier {
        "bf16" | "fp16" => Ok(2),
        "tf32" | "f32_pedantic" => Ok(4),
        _ => Err(format!(
            "tier `{tier}`: xtask does not know its element size (xtask/src/codegen/launch.rs)"
        )),
    }
}

/// Threads per block (`Tile::Mma`: as the root class has it; the fragment checks the other
/// classes agree).
pub fn threads(tile: &Tile) -> u32 {
    match tile {
        Tile::Mma(t) => mma_threads(t),
        Tile::Fma(t) => (t.bm / t.tm) * (t.bn / t.tn),
        Tile::Decode(t) => t.warps * 32,
        Tile::Wgmma(t) => t.warpgroups * 128,
    }
}

pub fn mma_threads(t: &MmaTile) -> u32 {
    t.warps_m * t.warps_n * 32
}

/// The cp.async ring of a tensor-core tile: per stage the A and B tiles in 16-byte chunks;
/// f32 tiles stored MN-major carry 2 chunks of padding per row (`PaddedTile`), every other
/// tile is swizzled without padding.
pub fn mma_ring(t: &MmaTile, elem_bytes: u32, layout: Layout) -> u32 {
    let chunks = |outer: u32, k_major: bool| {
        let (rows, cols) = if k_major {
            (outer, t.bk)
        } else {
            (t.bk, outer)
        };
        let pad = if elem_bytes == 4 && !k_major { 2 } else { 0 };
        rows * (cols * elem_bytes / 16 + pad)
    };
    // A is K-major but in TN, B only in NT.
    let a = chunks(t.bm, layout != Layout::TN);
    let b = chunks(t.bn, layout == Layout::NT);
    t.stages * (a + b) * 16
}

/// Dynamic shared memory of an entry point whose ring does not change with the class: the
/// wgmma ring (per stage one 128-byte row per row of A and per column of B), the decode ring
/// walk's (per stage `ring_k` rows of `bn` 16-bit weights and 16 rows of `ring_k` of A); the
/// direct decode walk and FFMA kernels take static shared memory only.
pub fn fixed_ring(tile: &Tile) -> u32 {
    match tile {
        Tile::Wgmma(t) => t.stages * (64 * t.warpgroups + t.bn) * 128,
        Tile::Mma(_) => unreachable!("a tensor-core ring depends on the class"),
        Tile::Decode(t) => t.ring_stages * (t.ring_k * t.bn + 16 * t.ring_k) * 2,
        Tile::Fma(_) => 0,
    }
}

#[cfg(test)]
#[allow(dead_code)]
#[path = "../../../src/ops/gemm/plan.rs"]
mod plan;

#[cfg(test)]
mod tests {
    use super::super::catalogue::Catalogue;
    use super::super::{manifest, SOURCE};
    use super::*;
    use plan::{Schedule, SmemClass, Tier};
    use std::collections::BTreeMap;
    use toml::Value;

    /// The fragment's entries by entry-point name, and its arch groups.
    fn fragment() -> (BTreeMap<String, Value>, toml::Table) {
        let text = std::fs::read_to_string(crate::root().join(SOURCE)).unwrap();
        let cat = Catalogue::parse(&text).unwrap();
        let groups = cat.groups().unwrap();
        let fragment: toml::Table =
            toml::from_str(&manifest::fragment(&cat, &groups).unwrap()).unwrap();
        let mut entries = BTreeMap::new();
        for g in &groups {
            let set = fragment["sets"][&format!("{}_entries", g.set)]
                .as_array()
                .unwrap();
            for tier in &g.tiers {
                for e in set {
                    let name = format!("gemm_{tier}_{}", e["name"].as_str().unwrap());
                    assert!(entries.insert(name, e.clone()).is_none());
                }
            }
        }
        (entries, fragment["arch_groups"].as_table().unwrap().clone())
    }

    /// `smem_kb228`: the arch group and ring key of a class.
    fn key(class: SmemClass) -> String {
        format!("smem_{class:?}").to_lowercase()
    }

    #[test]
    fn the_fragment_launches_what_the_planner_plans_in_every_class() {
        let (entries, _) = fragment();
        let mut planned = Vec::new();
        for class in SmemClass::ALL {
            for tier in Tier::ALL {
                for layout in plan::Layout::ALL {
                    // The warp-specialized tile is declared in kernels.toml itself.
                    for s in plan::catalogued_schedules(tier, layout, class) {
                        let name = plan::entry_name(tier, layout, &s);
                        let e = entries
                            .get(&name)
                            .unwrap_or_else(|| panic!("{name} is planned, not in the fragment"));
                        let int = |v: &Value| v.as_integer().unwrap() as u32;
                        assert_eq!(int(&e["threads"]), s.threads(), "{name}: threads");
                        let ring = match s {
                            Schedule::Mma(t) => t.smem_bytes(tier, layout),
                            Schedule::Wgmma(t) => t.smem_bytes(),
                            Schedule::Tma(t) => t.smem_bytes(),
                            Schedule::Decode(t) => t.smem_bytes(),
                            Schedule::Fma(_) => 0,
                        };
                        let declared = match s {
                            Schedule::Mma(_) => int(&e["rings"][&key(class)]),
                            _ => int(&e["smem"]),
                        };
                        assert_eq!(declared, ring, "{name} in {class:?}: ring bytes");
                        planned.push(name);
                    }
                }
            }
        }
        for name in entries.keys() {
            assert!(
                planned.contains(name),
                "{name} is in the fragment, never planned"
            );
        }
    }

    #[test]
    fn mma_entries_declare_the_first_class_ring_and_arch_tables_where_others_differ() {
        let (entries, _) = fragment();
        let first = key(SmemClass::of_cc(90));
        for (name, e) in entries
            .iter()
            .filter(|(_, e)| e["kind"].as_str() == Some("mma"))
        {
            let rings = e["rings"].as_table().unwrap();
            assert_eq!(e["smem"], rings[&first], "{name}");
            let arch = e["arch"].as_table().unwrap();
            for (class, ring) in rings {
                let table = arch.get(class).map(|t| &t["dynamic_smem_bytes"]);
                let differs = *class != first && *ring != e["smem"];
                assert_eq!(table, differs.then_some(ring), "{name}: arch.{class}");
            }
        }
    }

    #[test]
    fn every_supported_arch_is_in_the_group_of_its_planner_class() {
        let (_, groups) = fragment();
        for arch in cubins_build::arch::SUPPORTED {
            let class = SmemClass::of_cc(arch.cc);
            let members = groups[&key(class)].as_array().unwrap();
            // `sm_90a` is the first class's, whose ring is every entry's own.
            let named = members.iter().any(|m| m.as_str() == Some(&arch.sm_name()));
            let first = class == SmemClass::of_cc(90);
            assert!(named || (first && arch.arch_specific), "{arch}: {class:?}");
        }
    }

    #[test]
    fn element_sizes_are_the_planner_tiers() {
        for tier in Tier::ALL {
            assert_eq!(input_bytes(tier.name()), Ok(tier.input_bytes()), "{tier:?}");
        }
        assert!(input_bytes("fp8").unwrap_err().contains("`fp8`"));
    }
}
