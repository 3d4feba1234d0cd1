//! The C++ and C outputs: the tile tables with the entry records the ENTRY macros check,
//! the generated entry-point include files, and params.h's flag bits.

use super::catalogue::{camel, Catalogue, Class, Group, Tile};
use super::{comment, doc, marker};

const CHECKED_BY: &str =
    "which its ENTRY macro checks (CUBINS_GEMM_CATALOGUED, cubins/gemm/args.cuh)";

/// `cuda/include/cubins/gemm/tiles.cuh`: the mma.sync, FFMA and decode tiles, and the
/// records of the entry points that take them.
pub fn tiles_cuh(cat: &Catalogue, groups: &[Group]) -> String {
    let mut s = marker("//");
    s += &comment(
        "//",
        &format!(
            "The tile configurations the GEMM tiers are instantiated with, and the layout and tile of \
             every entry point, {CHECKED_BY}. src/ops/gemm/tiles.rs holds the same tables for the planner."
        ),
    );
    s += "#pragma once\n\n";
    for h in [
        "cubins/arch.cuh",
        "cubins/gemm/decode_kernel.cuh",
        "cubins/gemm/fingerprints.cuh",
        "cubins/gemm/mma_kernel.cuh",
        "cubins/gemm/pedantic_kernel.cuh",
    ] {
        s += &format!("#include \"{h}\"\n");
    }
    s += "\nnamespace cubins {\nnamespace gemm {\n\n";
    s += "// Tensor-core tiles per shared-memory class (kSmSharedKb, cubins/arch.cuh).\n";
    s += "// MmaTile<BM, BN, BK, warps M, warps N, stages, min blocks per SM, skinny>\n";
    s += "template <int kSharedKb>\nstruct MmaTiles;\n";
    for class in &cat.classes {
        s += &mma_class(class);
    }
    s += &arch_check(cat);
    s += "using Tiles = MmaTiles<kSmSharedKb>;\n";
    for t in &cat.root().tiles {
        let c = camel(&t.name);
        s += &format!("using Tile{c} = Tiles::{c};\n");
    }
    s += "\n// FFMA tiles: FmaTile<BM, BN, BK, TM, TN, min blocks per SM>, the same on every arch.\n";
    for t in &cat.fma {
        s += &doc("//", &t.doc);
        s += &format!(
            "using {} = FmaTile<{}>;\n",
            Tile::Fma(t).cpp_alias(),
            join([t.bm, t.bn, t.bk, t.tm, t.tn, t.min_blocks])
        );
    }
    s += "\n// Decode (M <= 16): DecodeTile<cols, warps, unroll, load, stagger groups, double buffer,\n\
          // min blocks per SM, ring stages, ring k>; load 0: ld.global.cs, 1:\n\
          // ld.global.nc.L1::no_allocate.L2::256B; ring stages 0: the direct walk.\n";
    for t in &cat.decode {
        s += &doc("//", &t.doc);
        let args = [
            t.bn,
            t.warps,
            t.unroll,
            u32::from(t.l2_prefetch),
            t.stagger_groups,
            u32::from(t.double_buffer),
            t.min_blocks,
            t.ring_stages,
            t.ring_k,
        ];
        s += &format!(
            "using {} = DecodeTile<{}>;\n",
            Tile::Decode(t).cpp_alias(),
            join(args)
        );
    }
    s += &records(groups, |t| !matches!(t, Tile::Wgmma(_)));
    s += "\n}  // namespace gemm\n}  // namespace cubins\n";
    s
}

/// `cuda/include/cubins/gemm/wgmma_tiles.cuh`: the warpgroup-MMA tiles and their entries'
/// records (apart from tiles.cuh, whose kernel headers gemm_wgmma.cu does not need).
pub fn wgmma_tiles_cuh(cat: &Catalogue, groups: &[Group]) -> String {
    let mut s = marker("//");
    s += &comment(
        "//",
        &format!("The warpgroup-MMA tiles and the layout and tile of every wgmma entry point, {CHECKED_BY}."),
    );
    s += "#pragma once\n\n#include \"cubins/gemm/wgmma_kernel.cuh\"\n\nnamespace cubins {\nnamespace gemm {\n\n";
    s += "// WgmmaTile<warpgroups, BN, stages>: k tiles of one 128-byte row (64 16-bit or 32 f32\n\
          // values), so one C++ tile serves both.\n";
    let mut written: Vec<String> = Vec::new();
    for t in &cat.wgmma {
        let alias = Tile::Wgmma(t).cpp_alias();
        for other in cat.wgmma.iter().filter(|o| o.cpp() == t.cpp()) {
            if !written.contains(&alias) {
                s += &doc("//", &other.doc);
            }
        }
        if !written.contains(&alias) {
            s += &format!(
                "using {alias} = WgmmaTile<{}>;\n",
                join([t.warpgroups, t.bn, t.stages])
            );
            written.push(alias);
        }
    }
    s += &records(groups, |t| matches!(t, Tile::Wgmma(_)));
    s += "\n}  // namespace gemm\n}  // namespace cubins\n";
    s
}

/// One `MmaTiles<KB>` specialization: a root class every tile, a derived one those it lists.
fn mma_class(class: &Class) -> String {
    let mut s = String::from("\n");
    s += &comment("//", &format!("{}: {}", sm_list(class), class.doc));
    s += "template <>\n";
    s += &match class.base {
        None => format!("struct MmaTiles<{}> {{\n", class.kb),
        Some(base) => format!("struct MmaTiles<{}> : MmaTiles<{base}> {{\n", class.kb),
    };
    for name in &class.listed {
        let t = class
            .tiles
            .iter()
            .find(|t| &t.name == name)
            .expect("resolved");
        if class.base.is_none() {
            s += &doc("  //", &t.doc);
        }
        s += &format!("  using {} = MmaTile<{}>;\n", camel(name), join(t.args()));
    }
    s + "};\n"
}

/// A compile-time check that cubins/arch.cuh gives every arch the class the catalogue does.
fn arch_check(cat: &Catalogue) -> String {
    let mut expr = String::new();
    for class in cat.classes.iter().filter(|c| !c.default) {
        let cond: Vec<String> = class
            .cc
            .iter()
            .map(|cc| format!("__CUDA_ARCH__ == {}", cc * 10))
            .collect();
        expr += &format!(
            "{} ? {} :\n                              ",
            cond.join(" || "),
            class.kb
        );
    }
    let default = cat.classes.iter().find(|c| c.default).expect("checked");
    format!(
        "\n// The tiles of the arch being compiled: those of the class that lists it, which\n\
         // kSmSharedKb (cubins/arch.cuh) must name.\n\
         #if defined(__CUDA_ARCH__)\n\
         static_assert(kSmSharedKb == ({expr}{}),\n              \
         \"cubins/arch.cuh's kSmSharedKb differs from the classes of cuda/gemm_catalogue.toml\");\n\
         #endif\n",
        default.kb
    )
}

/// The `catalogue::<entry>` records of the entry points whose tiles `keep` selects.
fn records(groups: &[Group], keep: impl Fn(&Tile) -> bool) -> String {
    let mut s = String::from("\n");
    s += &comment(
        "//",
        &format!("The layout and tile of every entry point, {CHECKED_BY}."),
    );
    s += "namespace catalogue {\n";
    for g in groups {
        for (name, _, layout, tile) in g.expand() {
            if keep(&tile) {
                s += &format!(
                    "using {name} = Catalogued<Layout::{}, {}>;\n",
                    layout.upper(),
                    tile.cpp_alias()
                );
            }
        }
    }
    s + "}  // namespace catalogue\n"
}

/// An include file of entry points for the tiers of `g`: each kernel file of a tier defines
/// CUBINS_GEMM_ELEM and CUBINS_GEMM_NAME, then includes it.
pub fn entries_inc(g: &Group) -> String {
    let files: Vec<String> = g.tiers.iter().map(|t| format!("gemm_{t}.cu")).collect();
    let mut s = marker("//");
    s += &comment(
        "//",
        &format!(
            "Entry points of one GEMM tier, included by {} after they define CUBINS_GEMM_ELEM (the element \
             type) and CUBINS_GEMM_NAME(suffix) (the entry-point name): the catalogue's entries of this file.",
            files.join(" and ")
        ),
    );
    let mut headers: Vec<&str> = g
        .entries
        .iter()
        .map(|(_, t)| match t {
            Tile::Mma(_) => "mma_kernel.cuh",
            Tile::Fma(_) => "pedantic_kernel.cuh",
            Tile::Decode(_) => "decode_kernel.cuh",
            Tile::Wgmma(_) => "wgmma_tiles.cuh",
        })
        .collect();
    if headers.iter().any(|h| *h != "wgmma_tiles.cuh") {
        headers.push("tiles.cuh");
    }
    headers.sort();
    headers.dedup();
    for h in headers {
        s += &format!("#include \"cubins/gemm/{h}\"\n");
    }
    let mut last = None;
    for (layout, tile) in &g.entries {
        let kind = std::mem::discriminant(tile);
        if last != Some(kind) {
            s += "\n";
            last = Some(kind);
        }
        let elem = match tile {
            Tile::Fma(_) => "",
            _ => " CUBINS_GEMM_ELEM,",
        };
        s += &format!(
            "{}(CUBINS_GEMM_NAME({}_{}),{elem} {}, cubins::gemm::{})\n",
            tile.macro_name(),
            layout.lower(),
            tile.label(),
            layout.upper(),
            tile.cpp_alias()
        );
    }
    s
}

/// `cuda/include/cubins/params.h`.
pub fn params_h(cat: &Catalogue) -> String {
    let mut s = marker("//");
    s += "// Flag bits shared between kernels and Rust (src/params.rs holds the same). Plain C.\n#pragma once\n";
    for g in &cat.flags {
        s += "\n";
        s += &comment("//", &g.doc);
        for b in &g.bits {
            s += &doc("//", &b.doc);
            s += &format!("#define {}{} {}u\n", g.prefix, b.name, b.value);
        }
    }
    s
}

/// `sm_90, sm_100`; the default class also takes every arch no class names.
pub fn sm_list(class: &Class) -> String {
    let archs: Vec<String> = class.cc.iter().map(|cc| format!("sm_{cc}")).collect();
    let tail = if class.default {
        " (and any arch no class names)"
    } else {
        ""
    };
    format!("{}{tail}", archs.join(", "))
}

fn join<const N: usize>(args: [u32; N]) -> String {
    args.map(|a| a.to_string()).join(", ")
}
