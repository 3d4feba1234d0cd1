//! `cuda/gemm_tiles.generated.toml`, the fragment `cuda/kernels.toml` includes: per group of
//! entries its entry points with the launch facts that follow from their tiles (threads,
//! rings per shared-memory class), and an arch group per class. The contracts are review
//! decisions and stay in kernels.toml, keyed by tile.

use super::catalogue::{Catalogue, Class, Group, Tile};
use super::launch::{fixed_ring, input_bytes, mma_ring, mma_threads, threads};
use super::{comment, marker, SOURCE};
use crate::Result;

/// The arch group of a class, also the key of its ring in `rings` and `arch`.
fn group_name(class: &Class) -> String {
    format!("smem_kb{}", class.kb)
}

pub fn fragment(cat: &Catalogue, groups: &[Group]) -> Result<String> {
    let mut s = marker("#");
    s += &comment(
        "#",
        "The GEMM entry points for the kernel manifest: cuda/kernels.toml includes this file, and \
         its GEMM families take their entries from the sets here (their contracts stay there).",
    );
    s += "\n";
    s += &comment(
        "#",
        "The arches of each shared-memory class (its `cc`): where a tensor-core tile's ring \
         differs from the first class's, an entry point's `arch` names the class's group.",
    );
    s += "[arch_groups]\n";
    for class in &cat.classes {
        let archs: Vec<String> = class.cc.iter().map(|cc| format!("sm_{cc}")).collect();
        s += &format!("{} = {}\n", group_name(class), list(&archs));
    }
    s += "\n";
    s += &comment(
        "#",
        "`<set>_entries`, one set per group of the catalogue's [[entries]], in its order: each \
         value is an entry point `gemm_<tier>_<name>` of the group's tiers, with its `layout`, the \
         `label` its name ends with, the catalogue's `tile` and its `kind` (mma, decode, fma, \
         wgmma), the `threads` per block and `smem`, the dynamic shared memory it is launched \
         with (its ring in the first class; 0: none). Tensor-core (mma) entries add `rings`, the \
         ring in each class keyed by its group, and `arch`, `dynamic_smem_bytes` per class where \
         that differs from `smem` (an arch table for the manifest).",
    );
    let mut seen: Vec<&String> = Vec::new();
    for g in groups {
        if seen.contains(&&g.set) {
            return Err(format!(
                "{SOURCE}: two groups of entries use the set name `{}`",
                g.set
            )
            .into());
        }
        seen.push(&g.set);
        s += &format!("\n# {}: {} ({})\n", g.set, g.tiers.join(", "), g.file);
        for (i, (layout, tile)) in g.entries.iter().enumerate() {
            if i > 0 {
                s += "\n";
            }
            s += &format!("[[sets.{}_entries]]\n", g.set);
            let label = tile.label();
            s += &format!("name = \"{}_{label}\"\n", layout.lower());
            s += &format!("layout = \"{}\"\n", layout.lower());
            s += &format!("label = \"{label}\"\n");
            s += &format!("tile = \"{}\"\n", tile.name());
            s += &format!("kind = \"{}\"\n", tile.kind());
            s += &format!("threads = {}\n", threads(tile));
            match tile {
                Tile::Mma(_) => {
                    let rings = rings(cat, g, tile.name(), *layout)?;
                    s += &format!("smem = {}\n", rings[0].1);
                    let entry = |(key, ring): &(String, u32)| format!("{key} = {ring}");
                    let all: Vec<String> = rings.iter().map(entry).collect();
                    s += &format!("rings = {{ {} }}\n", all.join(", "));
                    let differ: Vec<String> = rings[1..]
                        .iter()
                        .filter(|(_, ring)| *ring != rings[0].1)
                        .map(|(key, ring)| format!("{key} = {{ dynamic_smem_bytes = {ring} }}"))
                        .collect();
                    s += &match differ.is_empty() {
                        true => "arch = {}\n".to_string(),
                        false => format!("arch = {{ {} }}\n", differ.join(", ")),
                    };
                }
                _ => s += &format!("smem = {}\n", fixed_ring(tile)),
            }
        }
    }
    Ok(s)
}

/// (group, ring bytes) of tensor-core tile `name` in `layout` per class, the first first.
fn rings(
    cat: &Catalogue,
    g: &Group,
    name: &str,
    layout: super::catalogue::Layout,
) -> Result<Vec<(String, u32)>> {
    let sizes = g
        .tiers
        .iter()
        .map(|t| input_bytes(t))
        .collect::<std::result::Result<Vec<u32>, String>>()?;
    if sizes.iter().any(|b| *b != sizes[0]) {
        return Err(format!(
            "{SOURCE}: entries of {}: tiers {} have elements of different sizes, so their \
             tensor-core tiles would need rings of their own",
            g.file,
            g.tiers.join(", ")
        )
        .into());
    }
    let root = cat.root().tiles.iter().find(|t| t.name == name);
    let threads = root.map(mma_threads);
    let mut out = Vec::new();
    for class in &cat.classes {
        let t = class
            .tiles
            .iter()
            .find(|t| t.name == name)
            .expect("resolved");
        if Some(mma_threads(t)) != threads {
            return Err(format!(
                "{SOURCE}: MmaTiles<{}>::{name}: warps_m x warps_n differs from the first class's; \
                 an entry point has one block size on every arch",
                class.kb
            )
            .into());
        }
        out.push((group_name(class), mma_ring(t, sizes[0], layout)));
    }
    Ok(out)
}

fn list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("\"{i}\"")).collect();
    format!("[{}]", quoted.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A catalogue of two classes, one tile each kind, `rows` as its one entry group's.
    fn fragment_of(tiers: &str, override_: &str, rows: &str) -> Result<toml::Table> {
        let cat = Catalogue::parse(&format!(
            r#"
fma = [{{ name = "fma", bm = 64, bn = 64, bk = 16, tm = 4, tn = 4, min_blocks = 4 }}]
decode = [{{ name = "nn_d", cpp = "NnD", bn = 32, warps = 8, unroll = 2, l2_prefetch = true, stagger_groups = 0, double_buffer = false, min_blocks = 2 }}]
wgmma = [{{ name = "wg", warpgroups = 2, bn = 256, bk = 64, stages = 4 }}]
flags = []
[[mma_class]]
kb = 228
cc = [90, 100]
doc = ""
tiles = [
  {{ name = "big", bm = 128, bn = 256, bk = 64, warps_m = 2, warps_n = 4, stages = 3, min_blocks = 1 }},
  {{ name = "mid", bm = 128, bn = 128, bk = 32, warps_m = 2, warps_n = 2, stages = 4, min_blocks = 2 }},
]
[[mma_class]]
kb = 100
cc = [86]
default = true
base = 228
doc = ""
tiles = [{{ name = "big", {override_} }}]
[[entries]]
file = "x.inc"
tiers = {tiers}
set = "x"
rows = [{rows}]
"#
        ))?;
        let text = fragment(&cat, &cat.groups()?)?;
        Ok(toml::from_str(&text)?)
    }

    fn entries(f: &toml::Table) -> &Vec<toml::Value> {
        f["sets"]["x_entries"].as_array().unwrap()
    }

    /// A TOML value from its text.
    fn value(text: &str) -> toml::Value {
        toml::from_str::<toml::Table>(&format!("v = {text}")).unwrap()["v"].clone()
    }

    #[test]
    fn arch_tables_name_only_the_classes_whose_ring_differs() {
        let rows = r#"{ nn = "big", nt = "mid" }, { tn = "nn_d", nt = "fma" }, { nt = "wg" }"#;
        let f = fragment_of(r#"["bf16", "fp16"]"#, "bk = 32, stages = 4", rows).unwrap();
        assert_eq!(
            f["arch_groups"],
            value(r#"{ smem_kb228 = ["sm_90", "sm_100"], smem_kb100 = ["sm_86"] }"#)
        );
        let e = entries(&f);
        // 3 x (128 x 64 + 64 x 256) x 2 bytes; in the 100 KB class 4 x (128 x 32 + 32 x 256) x 2.
        assert_eq!(
            e[0],
            value(
                r#"{ name = "nn_128x256", layout = "nn", label = "128x256", tile = "big",
                     kind = "mma", threads = 256, smem = 147456,
                     rings = { smem_kb228 = 147456, smem_kb100 = 98304 },
                     arch = { smem_kb100 = { dynamic_smem_bytes = 98304 } } }"#
                    .replace('\n', " ")
                    .as_str()
            )
        );
        // The same ring in every class: no arch table.
        assert_eq!(
            (&e[1]["smem"], &e[1]["arch"]),
            (&value("65536"), &value("{}"))
        );
        for (i, name, kind, smem) in [
            (2, "tn_decode_n32w8", "decode", 0),
            (3, "nt_64x64", "fma", 0),
            (4, "nt_wgmma_128x256", "wgmma", 196608),
        ] {
            let e = e[i].as_table().unwrap();
            assert_eq!(
                (e["name"].as_str(), e["kind"].as_str()),
                (Some(name), Some(kind))
            );
            assert_eq!(
                (e["threads"].as_integer(), e["smem"].as_integer()),
                (Some(256), Some(smem))
            );
            assert!(!e.contains_key("arch") && !e.contains_key("rings"), "{e}");
        }
    }

    #[test]
    fn f32_rings_pad_mn_major_tiles() {
        let f = fragment_of(
            r#"["tf32"]"#,
            "bk = 16",
            r#"{ nn = "mid", tn = "mid", nt = "mid" }"#,
        )
        .unwrap();
        let smem: Vec<String> = entries(&f).iter().map(|e| e["smem"].to_string()).collect();
        // 4 stages of 16-byte chunks: 128 K-major rows of 8, or 32 MN-major rows of 32 + 2.
        // NN: B MN-major; TN: A and B; NT: neither.
        assert_eq!(smem, ["135168", "139264", "131072"]);
    }

    #[test]
    fn one_block_size_and_one_element_size_per_entry() {
        let e = fragment_of(r#"["bf16"]"#, "warps_n = 2", r#"{ nn = "big" }"#).unwrap_err();
        assert!(
            e.to_string()
                .contains("MmaTiles<100>::big: warps_m x warps_n"),
            "{e}"
        );
        let e = fragment_of(r#"["bf16", "tf32"]"#, "bk = 32", r#"{ nn = "big" }"#).unwrap_err();
        assert!(e.to_string().contains("different sizes"), "{e}");
        // Only tensor-core rings depend on the element size.
        fragment_of(r#"["bf16", "tf32"]"#, "bk = 32", r#"{ nn = "wg" }"#).unwrap();
    }
}
