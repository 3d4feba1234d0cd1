//! `cuda/gemm_catalogue.toml` read, checked and resolved: every class's full tile set, the
//! tile each entry point instantiates, and the flag bits. The emitters only format this.

use serde::Deserialize;
use std::collections::BTreeSet;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    mma_class: Vec<RawClass>,
    fma: Vec<FmaTile>,
    decode: Vec<DecodeTile>,
    wgmma: Vec<WgmmaTile>,
    entries: Vec<RawGroup>,
    flags: Vec<FlagGroup>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClass {
    kb: u32,
    cc: Vec<u32>,
    #[serde(default)]
    default: bool,
    base: Option<u32>,
    tiles: Vec<RawMma>,
    doc: String,
}

/// A tensor-core tile as a class lists it: every field in a root class, the changed ones in
/// a class with a base.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMma {
    name: String,
    skinny: Option<bool>,
    bm: Option<u32>,
    bn: Option<u32>,
    bk: Option<u32>,
    warps_m: Option<u32>,
    warps_n: Option<u32>,
    stages: Option<u32>,
    min_blocks: Option<u32>,
    doc: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MmaTile {
    pub name: String,
    pub skinny: bool,
    pub bm: u32,
    pub bn: u32,
    pub bk: u32,
    pub warps_m: u32,
    pub warps_n: u32,
    pub stages: u32,
    pub min_blocks: u32,
    pub doc: Option<String>,
}

impl MmaTile {
    /// Template arguments of `MmaTile<...>` (the skinny flag as 0 or 1).
    pub fn args(&self) -> [u32; 8] {
        [
            self.bm,
            self.bn,
            self.bk,
            self.warps_m,
            self.warps_n,
            self.stages,
            self.min_blocks,
            u32::from(self.skinny),
        ]
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FmaTile {
    pub name: String,
    pub bm: u32,
    pub bn: u32,
    pub bk: u32,
    pub tm: u32,
    pub tn: u32,
    pub min_blocks: u32,
    pub doc: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecodeTile {
    pub name: String,
    pub cpp: String,
    pub bn: u32,
    pub warps: u32,
    pub unroll: u32,
    pub l2_prefetch: bool,
    pub stagger_groups: u32,
    pub double_buffer: bool,
    pub min_blocks: u32,
    /// Stages of the ring walk's shared-memory ring (0: the direct walk), and k rows a stage.
    #[serde(default)]
    pub ring_stages: u32,
    #[serde(default)]
    pub ring_k: u32,
    pub doc: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WgmmaTile {
    pub name: String,
    cpp: Option<String>,
    pub warpgroups: u32,
    pub bn: u32,
    pub bk: u32,
    pub stages: u32,
    pub doc: Option<String>,
}

impl WgmmaTile {
    pub fn cpp(&self) -> String {
        self.cpp.clone().unwrap_or_else(|| camel(&self.name))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGroup {
    file: String,
    tiers: Vec<String>,
    set: String,
    #[serde(default)]
    any_layout: bool,
    rows: Vec<Row>,
}

/// One row of an entry group: the tile per layout.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Row {
    nn: Option<String>,
    tn: Option<String>,
    nt: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlagGroup {
    pub prefix: String,
    pub plan_prefix: String,
    pub doc: String,
    pub bits: Vec<Flag>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flag {
    pub name: String,
    pub value: u32,
    pub doc: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Layout {
    NN,
    TN,
    NT,
}

impl Layout {
    pub const ALL: [Layout; 3] = [Layout::NN, Layout::TN, Layout::NT];

    /// `NN`: the C++ and Rust enumerator.
    pub fn upper(self) -> &'static str {
        match self {
            Layout::NN => "NN",
            Layout::TN => "TN",
            Layout::NT => "NT",
        }
    }

    /// `nn`: as entry-point names spell it.
    pub fn lower(self) -> &'static str {
        match self {
            Layout::NN => "nn",
            Layout::TN => "tn",
            Layout::NT => "nt",
        }
    }
}

/// A shared-memory class with every tile resolved through its bases.
#[derive(Debug)]
pub struct Class {
    pub kb: u32,
    pub cc: Vec<u32>,
    pub default: bool,
    pub base: Option<u32>,
    pub doc: String,
    /// Every tile, in the root class's order.
    pub tiles: Vec<MmaTile>,
    /// The tiles this class lists (all of them for a root class).
    pub listed: Vec<String>,
}

/// What an entry point instantiates.
#[derive(Debug, Clone, Copy)]
pub enum Tile<'a> {
    /// A tensor-core tile, by name: its fields depend on the class.
    Mma(&'a MmaTile),
    Fma(&'a FmaTile),
    Decode(&'a DecodeTile),
    Wgmma(&'a WgmmaTile),
}

impl Tile<'_> {
    /// The entry-point suffix after the layout: `128x256`, `skinny_64x64`, `decode_n32w8`.
    pub fn label(&self) -> String {
        match self {
            Tile::Mma(t) if t.skinny => format!("skinny_{}x{}", t.bm, t.bn),
            Tile::Mma(t) => format!("{}x{}", t.bm, t.bn),
            Tile::Fma(t) => format!("{}x{}", t.bm, t.bn),
            Tile::Decode(t) => format!("decode_n{}w{}", t.bn, t.warps),
            Tile::Wgmma(t) => format!("wgmma_{}x{}", 64 * t.warpgroups, t.bn),
        }
    }

    /// Its name in the catalogue: `large`, `nt_n16w8`.
    pub fn name(&self) -> &str {
        match self {
            Tile::Mma(t) => &t.name,
            Tile::Fma(t) => &t.name,
            Tile::Decode(t) => &t.name,
            Tile::Wgmma(t) => &t.name,
        }
    }

    /// The kernel it instantiates: `mma`, `fma`, `decode` or `wgmma`.
    pub fn kind(&self) -> &'static str {
        match self {
            Tile::Mma(_) => "mma",
            Tile::Fma(_) => "fma",
            Tile::Decode(_) => "decode",
            Tile::Wgmma(_) => "wgmma",
        }
    }

    /// The C++ alias in `cubins::gemm` that names the tile of the arch being compiled.
    pub fn cpp_alias(&self) -> String {
        match self {
            Tile::Mma(t) => format!("Tile{}", camel(&t.name)),
            Tile::Fma(t) => format!("Tile{}", camel(&t.name)),
            Tile::Decode(t) => format!("Decode{}", t.cpp),
            Tile::Wgmma(t) => format!("Tile{}", t.cpp()),
        }
    }

    /// The entry macro of cubins/gemm/*_kernel.cuh that instantiates it.
    pub fn macro_name(&self) -> &'static str {
        match self {
            Tile::Mma(_) => "CUBINS_GEMM_MMA_ENTRY",
            Tile::Fma(_) => "CUBINS_GEMM_PEDANTIC_ENTRY",
            Tile::Decode(_) => "CUBINS_GEMM_DECODE_ENTRY",
            Tile::Wgmma(_) => "CUBINS_GEMM_WGMMA_ENTRY",
        }
    }
}

/// One group of `[[entries]]`, rows resolved.
#[derive(Debug)]
pub struct Group<'a> {
    pub file: String,
    pub tiers: Vec<String>,
    pub set: String,
    pub any_layout: bool,
    /// (layout, tile) in instantiation order.
    pub entries: Vec<(Layout, Tile<'a>)>,
}

impl Group<'_> {
    /// Whether the catalogue writes this group's instantiations (an include file) or the
    /// kernel file keeps them by hand.
    pub fn generated(&self) -> bool {
        self.file.ends_with(".inc")
    }

    /// `gemm_bf16_nn_128x256`.
    pub fn entry_name(tier: &str, layout: Layout, tile: &Tile) -> String {
        format!("gemm_{tier}_{}_{}", layout.lower(), tile.label())
    }

    /// Every entry point of the group: (name, tier, layout, tile), tier by tier.
    pub fn expand(&self) -> Vec<(String, &str, Layout, Tile<'_>)> {
        let mut v = Vec::new();
        for tier in &self.tiers {
            for (layout, tile) in &self.entries {
                v.push((
                    Self::entry_name(tier, *layout, tile),
                    tier.as_str(),
                    *layout,
                    *tile,
                ));
            }
        }
        v
    }
}

/// The catalogue's tile data, owned; [`Catalogue::groups`] borrows it.
#[derive(Debug)]
pub struct Catalogue {
    pub classes: Vec<Class>,
    pub fma: Vec<FmaTile>,
    pub decode: Vec<DecodeTile>,
    pub wgmma: Vec<WgmmaTile>,
    pub flags: Vec<FlagGroup>,
    raw_groups: Vec<RawGroup>,
}

type Error = String;

impl Catalogue {
    pub fn parse(text: &str) -> Result<Catalogue, Error> {
        let raw: Raw = toml::from_str(text).map_err(|e| e.to_string())?;
        let classes = resolve_classes(raw.mma_class)?;
        let cat = Catalogue {
            classes,
            fma: raw.fma,
            decode: raw.decode,
            wgmma: raw.wgmma,
            flags: raw.flags,
            raw_groups: raw.entries,
        };
        cat.check_names()?;
        cat.check_wgmma_aliases()?;
        let names: Vec<String> = cat
            .groups()?
            .iter()
            .flat_map(|g| g.expand().into_iter().map(|e| e.0))
            .collect();
        if let Some(dup) = first_duplicate(names.iter()) {
            return Err(format!("entry point `{dup}` is listed twice"));
        }
        let flags: Vec<String> = cat
            .flags
            .iter()
            .flat_map(|g| g.bits.iter().map(|b| format!("{}{}", g.prefix, b.name)))
            .collect();
        if let Some(dup) = first_duplicate(flags.iter()) {
            return Err(format!("flag `{dup}` is listed twice"));
        }
        Ok(cat)
    }

    /// The root class: the one whose tiles are `TILE_*` and `Tile*`.
    pub fn root(&self) -> &Class {
        &self.classes[0]
    }

    /// Tile names are one namespace across kinds: rows name tiles without their kind.
    fn check_names(&self) -> Result<(), Error> {
        let names = self
            .root()
            .tiles
            .iter()
            .map(|t| &t.name)
            .chain(self.fma.iter().map(|t| &t.name))
            .chain(self.decode.iter().map(|t| &t.name))
            .chain(self.wgmma.iter().map(|t| &t.name));
        match first_duplicate(names) {
            Some(dup) => Err(format!("tile name `{dup}` is used twice")),
            None => Ok(()),
        }
    }

    /// wgmma tiles that share a C++ alias must be the same C++ type (`bk` is not a template
    /// argument).
    fn check_wgmma_aliases(&self) -> Result<(), Error> {
        for (i, a) in self.wgmma.iter().enumerate() {
            for b in &self.wgmma[..i] {
                let same = (a.warpgroups, a.bn, a.stages) == (b.warpgroups, b.bn, b.stages);
                if a.cpp() == b.cpp() && !same {
                    return Err(format!(
                        "wgmma tiles `{}` and `{}` share the C++ alias `{}` with different template arguments",
                        b.name,
                        a.name,
                        a.cpp()
                    ));
                }
            }
        }
        Ok(())
    }

    fn tile(&self, name: &str) -> Option<Tile<'_>> {
        let root = &self.root().tiles;
        (root.iter().find(|t| t.name == name).map(Tile::Mma))
            .or_else(|| self.fma.iter().find(|t| t.name == name).map(Tile::Fma))
            .or_else(|| {
                self.decode
                    .iter()
                    .find(|t| t.name == name)
                    .map(Tile::Decode)
            })
            .or_else(|| self.wgmma.iter().find(|t| t.name == name).map(Tile::Wgmma))
    }

    /// The entry groups, every row's tiles looked up (tensor-core tiles as the root class
    /// has them: names and labels do not change with the class).
    pub fn groups(&self) -> Result<Vec<Group<'_>>, Error> {
        let mut groups = Vec::new();
        for g in &self.raw_groups {
            let mut entries = Vec::new();
            for row in &g.rows {
                for (layout, name) in [
                    (Layout::NN, &row.nn),
                    (Layout::TN, &row.tn),
                    (Layout::NT, &row.nt),
                ] {
                    if let Some(name) = name {
                        let tile = self.tile(name).ok_or_else(|| {
                            format!("entries of {}: no tile named `{name}`", g.file)
                        })?;
                        entries.push((layout, tile));
                    }
                }
            }
            if g.tiers.is_empty() || entries.is_empty() {
                return Err(format!("entries of {}: no tiers or no rows", g.file));
            }
            groups.push(Group {
                file: g.file.clone(),
                tiers: g.tiers.clone(),
                set: g.set.clone(),
                any_layout: g.any_layout,
                entries,
            });
        }
        Ok(groups)
    }

    /// The tiers in the order the catalogue first names them.
    pub fn tiers(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for g in &self.raw_groups {
            for t in &g.tiers {
                if !v.contains(t) {
                    v.push(t.clone());
                }
            }
        }
        v
    }
}

/// Every class's tiles: a root class lists them all; a class with a base takes the base's
/// and changes the fields it lists, never the ones entry-point names are made of.
fn resolve_classes(raw: Vec<RawClass>) -> Result<Vec<Class>, Error> {
    let mut classes: Vec<Class> = Vec::new();
    for c in raw {
        let what = |name: &str| format!("MmaTiles<{}>::{name}", c.kb);
        let tiles = match c.base {
            None if classes.is_empty() => c
                .tiles
                .iter()
                .map(|t| {
                    full_tile(t).ok_or_else(|| {
                        format!(
                            "{}: every field is needed in a class without a base",
                            what(&t.name)
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
            None => {
                return Err(format!(
                    "class {} KB: only the first class has no base",
                    c.kb
                ))
            }
            Some(base) => {
                let base = classes.iter().find(|b| b.kb == base).ok_or_else(|| {
                    format!(
                        "class {} KB: its base {base} KB is not listed before it",
                        c.kb
                    )
                })?;
                let mut tiles = base.tiles.clone();
                for o in &c.tiles {
                    let t = tiles.iter_mut().find(|t| t.name == o.name).ok_or_else(|| {
                        format!("{}: the base class has no such tile", what(&o.name))
                    })?;
                    if o.bm.is_some() || o.bn.is_some() || o.skinny.is_some() {
                        return Err(format!(
                            "{}: bm, bn and skinny make the entry-point name and cannot change per class",
                            what(&o.name)
                        ));
                    }
                    override_tile(t, o);
                }
                tiles
            }
        };
        if let Some(dup) = first_duplicate(c.tiles.iter().map(|t| &t.name)) {
            return Err(format!("{}: listed twice", what(dup)));
        }
        classes.push(Class {
            kb: c.kb,
            cc: c.cc,
            default: c.default,
            base: c.base,
            doc: c.doc,
            tiles,
            listed: c.tiles.into_iter().map(|t| t.name).collect(),
        });
    }
    let defaults = classes.iter().filter(|c| c.default).count();
    if defaults != 1 {
        return Err(format!(
            "{defaults} classes are the `default`; exactly one must be"
        ));
    }
    let ccs: Vec<u32> = classes.iter().flat_map(|c| c.cc.clone()).collect();
    if let Some(dup) = first_duplicate(ccs.iter()) {
        return Err(format!("compute capability {dup} is in two classes"));
    }
    Ok(classes)
}

fn full_tile(t: &RawMma) -> Option<MmaTile> {
    Some(MmaTile {
        name: t.name.clone(),
        skinny: t.skinny.unwrap_or(false),
        bm: t.bm?,
        bn: t.bn?,
        bk: t.bk?,
        warps_m: t.warps_m?,
        warps_n: t.warps_n?,
        stages: t.stages?,
        min_blocks: t.min_blocks?,
        doc: t.doc.clone(),
    })
}

fn override_tile(t: &mut MmaTile, o: &RawMma) {
    let set = |field: &mut u32, v: Option<u32>| *field = v.unwrap_or(*field);
    set(&mut t.bk, o.bk);
    set(&mut t.warps_m, o.warps_m);
    set(&mut t.warps_n, o.warps_n);
    set(&mut t.stages, o.stages);
    set(&mut t.min_blocks, o.min_blocks);
    if o.doc.is_some() {
        t.doc = o.doc.clone();
    }
}

fn first_duplicate<'a, T: Ord + 'a>(items: impl Iterator<Item = &'a T>) -> Option<&'a T> {
    let mut seen = BTreeSet::new();
    items.into_iter().find(|i| !seen.insert(*i))
}

/// `skinny_64x64` -> `Skinny64x64`, `tf32_wide` -> `Tf32Wide`.
pub fn camel(snake: &str) -> String {
    snake
        .split('_')
        .map(|part| {
            let mut c = part.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A catalogue of two classes, one tile each kind, `rows` as its one entry group's.
    fn catalogue(override_: &str, rows: &str) -> Result<Catalogue, Error> {
        Catalogue::parse(&format!(
            r#"
fma = [{{ name = "fma", bm = 64, bn = 64, bk = 16, tm = 4, tn = 4, min_blocks = 4 }}]
decode = [{{ name = "nn_d", cpp = "NnD", bn = 32, warps = 8, unroll = 2, l2_prefetch = true, stagger_groups = 0, double_buffer = false, min_blocks = 2 }}]
wgmma = [{{ name = "wg", warpgroups = 2, bn = 256, bk = 64, stages = 4 }}]
flags = []
[[mma_class]]
kb = 228
cc = [90]
doc = ""
tiles = [{{ name = "big", bm = 128, bn = 256, bk = 64, warps_m = 2, warps_n = 4, stages = 3, min_blocks = 1 }}]
[[mma_class]]
kb = 100
cc = [86]
default = true
base = 228
doc = ""
tiles = [{{ name = "big", {override_} }}]
[[entries]]
file = "x.inc"
tiers = ["bf16"]
set = "x"
rows = [{rows}]
"#
        ))
    }

    #[test]
    fn a_derived_class_changes_only_the_fields_it_lists() {
        let cat = catalogue("stages = 4", r#"{ nn = "big", nt = "nn_d" }"#).unwrap();
        let (root, derived) = (&cat.classes[0].tiles[0], &cat.classes[1].tiles[0]);
        assert_eq!(derived.args(), [128, 256, 64, 2, 4, 4, 1, 0]);
        assert_eq!(root.args(), [128, 256, 64, 2, 4, 3, 1, 0]);
        let names: Vec<String> = cat.groups().unwrap()[0]
            .expand()
            .into_iter()
            .map(|e| e.0)
            .collect();
        assert_eq!(names, ["gemm_bf16_nn_128x256", "gemm_bf16_nt_decode_n32w8"]);
    }

    #[test]
    fn what_names_an_entry_point_cannot_change_per_class() {
        let e = catalogue("bn = 128", r#"{ nn = "big" }"#).unwrap_err();
        assert!(
            e.contains("MmaTiles<100>::big") && e.contains("cannot change"),
            "{e}"
        );
    }

    #[test]
    fn rows_name_tiles_that_exist_and_entry_points_once() {
        let e = catalogue("bk = 32", r#"{ nn = "huge" }"#).unwrap_err();
        assert!(e.contains("no tile named `huge`"), "{e}");
        let e = catalogue("bk = 32", r#"{ nn = "big" }, { nn = "big" }"#).unwrap_err();
        assert!(e.contains("`gemm_bf16_nn_128x256` is listed twice"), "{e}");
    }

    #[test]
    fn labels_and_aliases_follow_the_tile() {
        let cat = catalogue("bk = 32", r#"{ nn = "fma", tn = "wg" }"#).unwrap();
        let tiles: Vec<(String, String)> = cat.groups().unwrap()[0]
            .entries
            .iter()
            .map(|(_, t)| (t.label(), t.cpp_alias()))
            .collect();
        assert_eq!(
            tiles,
            [
                ("64x64".into(), "TileFma".into()),
                ("wgmma_128x256".into(), "TileWg".into())
            ]
        );
        assert_eq!(camel("skinny_64x64"), "Skinny64x64");
        assert_eq!(camel("tf32_wide"), "Tf32Wide");
    }
}
