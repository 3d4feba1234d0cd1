//! The Rust outputs: the planner's tables (`src/ops/gemm/tiles.rs`, a module of `plan.rs`)
//! and the flag bits under their C names (`src/params.rs`), formatted as `cargo fmt` would.

use super::catalogue::{camel, Catalogue, Class, Group, Layout, MmaTile, Tile};
use super::cpp::sm_list;
use super::{comment, doc, marker};
use crate::{root, Result};

/// `src/ops/gemm/tiles.rs`.
pub fn tiles_rs(cat: &Catalogue, groups: &[Group]) -> String {
    let mut s = marker("//");
    s += "//! The GEMM catalogue's tables for the planner (`plan.rs`): the tensor-core tiles of each\n\
          //! shared-memory class, the FFMA, decode and wgmma tiles, the entry points of each tier\n\
          //! and layout, and the flag bits.\n\n\
          use super::{DecodeTile, FmaTile, Layout, MmaTile, Schedule, Tier, WgmmaTile};\n\n";
    s += &smem_class(cat);
    s += "/// The tensor-core tiles of one [`SmemClass`] (`MmaTiles<KB>` in tiles.cuh).\n\
          #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]\npub struct MmaTiles {\n";
    for t in &cat.root().tiles {
        s += &doc("///", &t.doc);
        s += &format!("pub {}: MmaTile,\n", t.name);
    }
    s += "}\n\n";
    for t in &cat.root().tiles {
        s += "\n";
        s += &doc("///", &t.doc);
        s += &format!(
            "pub const {}: MmaTile = {};\n",
            mma_const(&t.name),
            mma_literal(t)
        );
    }
    for class in &cat.classes {
        s += &tiles_const(cat, class);
    }
    for t in &cat.fma {
        s += "\n";
        s += &doc("///", &t.doc);
        s += &format!(
            "pub const {}: FmaTile = FmaTile {{ bm: {}, bn: {}, bk: {}, tm: {}, tn: {}, min_blocks: {} }};\n",
            mma_const(&t.name),
            t.bm,
            t.bn,
            t.bk,
            t.tm,
            t.tn,
            t.min_blocks
        );
    }
    for t in &cat.decode {
        s += "\n";
        s += &doc("///", &t.doc);
        s += &format!(
            "pub const {}: DecodeTile = DecodeTile {{ bn: {}, warps: {}, unroll: {}, l2_prefetch: {}, \
             stagger_groups: {}, double_buffer: {}, min_blocks: {}, ring_stages: {}, ring_k: {} }};\n",
            decode_const(&t.name),
            t.bn,
            t.warps,
            t.unroll,
            t.l2_prefetch,
            t.stagger_groups,
            t.double_buffer,
            t.min_blocks,
            t.ring_stages,
            t.ring_k
        );
    }
    for t in &cat.wgmma {
        s += "\n";
        s += &doc("///", &t.doc);
        s += &format!(
            "pub const {}: WgmmaTile = WgmmaTile {{ warpgroups: {}, bn: {}, bk: {}, stages: {} }};\n",
            mma_const(&t.name),
            t.warpgroups,
            t.bn,
            t.bk,
            t.stages
        );
    }
    s += &schedules(cat, groups);
    s += &flags_mod(cat);
    s
}

/// `src/params.rs`.
pub fn params_rs(cat: &Catalogue) -> String {
    let mut s = marker("//");
    s += "//! Flag bits shared between kernels and Rust: the `#define`s of\n\
          //! `cuda/include/cubins/params.h`, under the same names.\n";
    for g in &cat.flags {
        s += "\n";
        s += &comment("//", &g.doc);
        for b in &g.bits {
            s += &doc("///", &b.doc);
            s += &format!("pub const {}{}: u32 = {};\n", g.prefix, b.name, b.value);
        }
    }
    s
}

/// The `SmemClass` enum: one variant per class, smallest first.
fn smem_class(cat: &Catalogue) -> String {
    let mut classes: Vec<&Class> = cat.classes.iter().collect();
    classes.sort_by_key(|c| c.kb);
    let variant = |c: &Class| format!("SmemClass::Kb{}", c.kb);
    let mut s = String::from(
        "/// Shared memory an SM of the code's arch holds: it sets the rings the tensor-core tiles are\n\
         /// built with there (`kSmSharedKb` and `MmaTiles` in `cuda/include/cubins/arch.cuh` and\n\
         /// `gemm/tiles.cuh`). Taken from the compute capability the loaded code was built for, so\n\
         /// the PTX fallback plans with its own arch's tiles.\n\
         #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]\npub enum SmemClass {\n",
    );
    for c in &classes {
        s += &format!("/// {}: {} KB.\nKb{},\n", sm_list(c), c.kb, c.kb);
    }
    let all: Vec<String> = classes.iter().map(|c| variant(c)).collect();
    s += &format!(
        "}}\n\nimpl SmemClass {{\npub const ALL: [SmemClass; {}] = [{}];\n\n\
         /// The class of code built for compute capability `code_cc` (90 for `sm_90a`).\n\
         pub fn of_cc(code_cc: u32) -> SmemClass {{\nmatch code_cc {{\n",
        all.len(),
        all.join(", ")
    );
    for c in cat.classes.iter().filter(|c| !c.default) {
        let ccs: Vec<String> = c.cc.iter().map(u32::to_string).collect();
        s += &format!("{} => {},\n", ccs.join(" | "), variant(c));
    }
    let default = cat.classes.iter().find(|c| c.default).expect("checked");
    s += &format!(
        "_ => {},\n}}\n}}\n\n\
         /// The tensor-core tiles the kernels of this class are built with.\n\
         pub fn tiles(self) -> &'static MmaTiles {{\nmatch self {{\n",
        variant(default)
    );
    for c in &classes {
        s += &format!("{} => &{},\n", variant(c), tiles_name(c.kb));
    }
    s + "}\n}\n}\n\n"
}

/// `TILES_<KB>KB`: a root class names the `TILE_*` consts; a derived one its changes over
/// its base's.
fn tiles_const(cat: &Catalogue, class: &Class) -> String {
    let mut s = String::from("\n");
    s += &comment("///", &format!("{}: {}", sm_list(class), class.doc));
    s += &format!(
        "pub const {}: MmaTiles = MmaTiles {{\n",
        tiles_name(class.kb)
    );
    match class.base {
        None => {
            for t in &class.tiles {
                s += &format!("{}: {},\n", t.name, mma_const(&t.name));
            }
        }
        Some(kb) => {
            let base = cat.classes.iter().find(|c| c.kb == kb).expect("resolved");
            for name in &class.listed {
                let find = |c: &Class| {
                    c.tiles
                        .iter()
                        .find(|t| &t.name == name)
                        .cloned()
                        .expect("resolved")
                };
                let (t, b) = (find(class), find(base));
                let changed: Vec<String> = mma_fields(&t)
                    .into_iter()
                    .zip(mma_fields(&b))
                    .filter(|(a, b)| a != b)
                    .map(|(a, _)| a)
                    .collect();
                s += &match changed.is_empty() {
                    true => format!("{name}: {}.{name},\n", tiles_name(kb)),
                    false => format!(
                        "{name}: MmaTile {{ {}, ..{}.{name} }},\n",
                        changed.join(", "),
                        tiles_name(kb)
                    ),
                };
            }
            s += &format!("..{}\n", tiles_name(kb));
        }
    }
    s + "};\n"
}

/// `schedules`: each tier's entry points for a layout, in the catalogue's order (its
/// preference order), one match arm per distinct list.
fn schedules(cat: &Catalogue, groups: &[Group]) -> String {
    // (tier, layout) keys sharing one list of schedules.
    type Arm = (Vec<(String, Layout)>, Vec<String>);
    let mut arms: Vec<Arm> = Vec::new();
    for tier in cat.tiers() {
        for layout in Layout::ALL {
            let mut list: Vec<String> = Vec::new();
            for g in groups.iter().filter(|g| g.tiers.contains(&tier)) {
                for (l, tile) in &g.entries {
                    let e = schedule(tile);
                    if (g.any_layout || *l == layout) && !list.contains(&e) {
                        list.push(e);
                    }
                }
            }
            match arms.iter_mut().find(|(_, body)| *body == list) {
                Some((keys, _)) => keys.push((tier.clone(), layout)),
                None => arms.push((vec![(tier.clone(), layout)], list)),
            }
        }
    }
    let uses_class = arms
        .iter()
        .flat_map(|(_, b)| b)
        .any(|e| e.starts_with("Schedule::Mma"));
    let mut s = String::from(
        "\n/// The schedules each tier has catalogued entry points for in code of `class`, in selection\n\
         /// preference order (`plan::schedules` adds the warp-specialized tile).\n",
    );
    s += &format!(
        "pub fn catalogued_schedules(tier: Tier, layout: Layout, {}class: SmemClass) -> Vec<Schedule> {{\n",
        if uses_class { "" } else { "_" }
    );
    if uses_class {
        s += "let t = class.tiles();\n";
    }
    s += "match (tier, layout) {\n";
    for (keys, body) in &arms {
        s += &format!("{} => vec![{}],\n", pattern(keys), body.join(", "));
    }
    s + "}\n}\n"
}

/// `(Tier::Bf16 | Tier::Fp16, Layout::NN) | (Tier::Tf32, _)`.
fn pattern(keys: &[(String, Layout)]) -> String {
    // Layouts per tier, then tiers grouped by their layout set.
    let mut by_tier: Vec<(String, Vec<Layout>)> = Vec::new();
    for (tier, layout) in keys {
        match by_tier.iter_mut().find(|(t, _)| t == tier) {
            Some((_, ls)) => ls.push(*layout),
            None => by_tier.push((tier.clone(), vec![*layout])),
        }
    }
    let mut by_layouts: Vec<(Vec<Layout>, Vec<String>)> = Vec::new();
    for (tier, layouts) in by_tier {
        match by_layouts.iter_mut().find(|(ls, _)| *ls == layouts) {
            Some((_, tiers)) => tiers.push(tier),
            None => by_layouts.push((layouts, vec![tier])),
        }
    }
    let alts: Vec<String> = by_layouts
        .iter()
        .map(|(layouts, tiers)| {
            let tiers: Vec<String> = tiers
                .iter()
                .map(|t| format!("Tier::{}", camel(t)))
                .collect();
            let layouts = if layouts.len() == Layout::ALL.len() {
                "_".to_string()
            } else {
                let ls: Vec<String> = layouts
                    .iter()
                    .map(|l| format!("Layout::{}", l.upper()))
                    .collect();
                ls.join(" | ")
            };
            format!("({}, {layouts})", tiers.join(" | "))
        })
        .collect();
    alts.join(" | ")
}

/// `plan::flags`: the bits under their planner names.
fn flags_mod(cat: &Catalogue) -> String {
    let mut s = String::from(
        "\n/// Flag bits of the kernels' `flags` arguments (`cuda/include/cubins/params.h`;\n\
         /// `cubins::params` holds them under their C names).\npub mod flags {\n",
    );
    for (i, g) in cat.flags.iter().enumerate() {
        if i > 0 {
            s += "\n";
        }
        s += &comment("//", &g.doc);
        for b in &g.bits {
            s += &doc("///", &b.doc);
            s += &format!(
                "pub const {}{}: u32 = {};\n",
                g.plan_prefix, b.name, b.value
            );
        }
    }
    s + "}\n"
}

fn schedule(tile: &Tile) -> String {
    match tile {
        Tile::Mma(t) => format!("Schedule::Mma(t.{})", t.name),
        Tile::Fma(t) => format!("Schedule::Fma({})", mma_const(&t.name)),
        Tile::Decode(t) => format!("Schedule::Decode({})", decode_const(&t.name)),
        Tile::Wgmma(t) => format!("Schedule::Wgmma({})", mma_const(&t.name)),
    }
}

fn mma_fields(t: &MmaTile) -> Vec<String> {
    let [bm, bn, bk, warps_m, warps_n, stages, min_blocks, _] = t.args();
    vec![
        format!("bm: {bm}"),
        format!("bn: {bn}"),
        format!("bk: {bk}"),
        format!("warps_m: {warps_m}"),
        format!("warps_n: {warps_n}"),
        format!("stages: {stages}"),
        format!("min_blocks: {min_blocks}"),
        format!("skinny: {}", t.skinny),
    ]
}

fn mma_literal(t: &MmaTile) -> String {
    format!("MmaTile {{ {} }}", mma_fields(t).join(", "))
}

fn mma_const(name: &str) -> String {
    format!("TILE_{}", name.to_uppercase())
}

fn decode_const(name: &str) -> String {
    format!("DECODE_{}", name.to_uppercase())
}

fn tiles_name(kb: u32) -> String {
    format!("TILES_{kb}KB")
}

/// `source` as `cargo fmt` formats it, so the generated files pass `cargo fmt --check`.
pub fn format(source: &str) -> Result<String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2021", "--emit", "stdout"])
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("running rustfmt: {e}"))?;
    child
        .stdin
        .take()
        .ok_or("rustfmt stdin")?
        .write_all(source.as_bytes())?;
    let out = child.wait_with_output()?;
    if !out.status.success() {
        return Err(format!("rustfmt failed: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(String::from_utf8(out.stdout)?)
}
