//! The manifest format, feature by feature and error by error (docs/manifest.md).

use super::include::{self, Files};
use super::*;
use std::path::PathBuf;

fn parse(text: &str) -> Manifest {
    Manifest::parse(text, "kernels.toml").unwrap_or_else(|e| panic!("{e}"))
}

/// The error `text` gives, as printed (file: message).
fn error(text: &str) -> String {
    Manifest::parse(text, "kernels.toml")
        .unwrap_err()
        .to_string()
}

fn entry<'a>(m: &'a Manifest, name: &str) -> &'a KernelEntry {
    m.kernels
        .get(name)
        .unwrap_or_else(|| panic!("no `{name}` in {:?}", m.kernels.keys().collect::<Vec<_>>()))
}

fn names(m: &Manifest) -> Vec<&str> {
    m.kernels.keys().map(String::as_str).collect()
}

fn min_blocks(block_size: u32, blocks: u32) -> Option<MinBlocks> {
    Some(MinBlocks { block_size, blocks })
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// Files held in memory, for includes.
struct Memory(Vec<(&'static str, &'static str)>);

impl Files for Memory {
    fn read(&self, path: &Path) -> Result<String, String> {
        self.0
            .iter()
            .find(|(p, _)| Path::new(p) == path)
            .map(|(_, text)| text.to_string())
            .ok_or_else(|| "No such file or directory".into())
    }
}

/// The manifest `root` of `files`, expanded.
fn load(files: Vec<(&'static str, &'static str)>, root: &str) -> Result<Manifest, ManifestError> {
    expand::manifest(include::from_file(&PathBuf::from(root), &Memory(files))?)
}

#[test]
fn arch_specific_files_are_declared_once() {
    let m = Manifest::parse(
        "[arch_specific]\nfiles = [\"gemm_wgmma.cu\"]\n\n[kernels.copy_vec16]\nfile = \"copy.cu\"\n",
        "kernels.toml",
    )
    .unwrap();
    assert_eq!(
        m.arch_specific_files(),
        Some(&["gemm_wgmma.cu".to_string()][..])
    );
    assert!(m.uses_arch_specific("gemm_wgmma.cu"));
    assert!(!m.uses_arch_specific("copy.cu"));
    // Without the table every file keeps every selected arch.
    let m = Manifest::parse("[kernels.copy_vec16]\nfile = \"copy.cu\"\n", "k.toml").unwrap();
    assert_eq!(m.arch_specific_files(), None);
    assert!(m.uses_arch_specific("copy.cu"));
    let e = Manifest::parse("[arch_specific]\nfile = [\"x.cu\"]\n", "k.toml").unwrap_err();
    assert!(e.to_string().contains("unknown field `file`"), "{e}");
}

#[test]
fn plain_entries_read_as_written() {
    let m = parse(
        r#"
[kernels.copy_vec16]
file = "copy.cu"
params = ["src: *const u8x16", "n: u64"]
block_sizes = [256]
dynamic_smem_bytes = 1024

[kernels.copy_vec16.contract]
max_registers = 32
spills = false
forbid = ["LDL"]
min_blocks_per_sm = { block_size = 256, blocks = 8 }

[kernels.copy_vec16.arch.sm_86]
min_blocks_per_sm = { block_size = 256, blocks = 6 }
exception = { allow = ["spills"], reason = "literal {braces} and @text stay" }
"#,
    );
    let e = entry(&m, "copy_vec16");
    assert_eq!(e.file, "copy.cu");
    assert_eq!(e.params, strings(&["src: *const u8x16", "n: u64"]));
    assert_eq!(
        (e.block_sizes.clone(), e.dynamic_smem_bytes),
        (vec![256], 1024)
    );
    assert_eq!(
        e.contract,
        Contract {
            max_registers: Some(32),
            spills: Some(false),
            forbid: Some(strings(&["LDL"])),
            min_blocks_per_sm: min_blocks(256, 8),
            ..Contract::default()
        }
    );
    let sm86 = &e.arch["sm_86"];
    assert_eq!(sm86.min_blocks_per_sm, min_blocks(256, 6));
    assert_eq!(
        sm86.exception.as_ref().unwrap().reason,
        "literal {braces} and @text stay"
    );
    assert_eq!(e.arch.len(), 1);
    // An entry without a contract or arch tables has none.
    let m = parse("[kernels.k]\nfile = \"k.cu\"\n");
    assert_eq!(
        entry(&m, "k"),
        &KernelEntry {
            file: "k.cu".into(),
            ..KernelEntry::default()
        }
    );
}

#[test]
fn defaults_apply_to_every_entry_and_the_entry_wins() {
    let m = parse(
        r#"
[defaults]
block_sizes = [128]
contract = { spills = false, max_stack_bytes = 0, forbid = ["LDL", "STL"] }
arch.sm_90 = { max_registers = 64 }

[kernels.a]
file = "a.cu"

[kernels.b]
file = "b.cu"
block_sizes = [256]
contract = { forbid = ["LDGSTS"], max_registers = 32 }
arch.sm_90 = { min_blocks_per_sm = { block_size = 256, blocks = 2 } }

[families.c]
file = "c.cu"
"#,
    );
    let defaults = Contract {
        spills: Some(false),
        max_stack_bytes: Some(0),
        forbid: Some(strings(&["LDL", "STL"])),
        ..Contract::default()
    };
    for name in ["a", "c"] {
        let e = entry(&m, name);
        assert_eq!(
            (&e.contract, e.block_sizes.as_slice()),
            (&defaults, &[128][..]),
            "{name}"
        );
        assert_eq!(e.arch["sm_90"].max_registers, Some(64));
    }
    let b = entry(&m, "b");
    assert_eq!(b.block_sizes, vec![256]);
    assert_eq!(
        b.contract,
        Contract {
            max_registers: Some(32),
            forbid: Some(strings(&["LDGSTS"])),
            ..defaults
        }
    );
    // Arch tables are overridden field by field too.
    assert_eq!(b.arch["sm_90"].max_registers, Some(64));
    assert_eq!(b.arch["sm_90"].min_blocks_per_sm, min_blocks(256, 2));
}

const GEMM: &str = r#"
[sets]
dtypes = [{ name = "bf16", ty = "bf16" }, { name = "fp16", ty = "f16" }]
params = ["a: *const {dtype.ty}", "n: i32"]
tiles = [{ name = "128x128", threads = 256, blocks = 1 }, { name = "64x64", threads = 128, blocks = 2 }]

[families.gemm]
name = "gemm_{dtype}_{layout}_{tile}"
axes = { dtype = "@dtypes", layout = ["nn", "nt"], tile = "@tiles" }
file = "gemm_{dtype.name}.cu"
params = ["@params", "flags: u32"]
block_sizes = ["{tile.threads}"]
contract.max_registers = 255
contract.min_blocks_per_sm = { block_size = "{tile.threads}", blocks = "{tile.blocks}" }
"#;

#[test]
fn a_family_makes_an_entry_per_combination_of_its_axes() {
    let m = parse(GEMM);
    assert_eq!(
        names(&m),
        [
            "gemm_bf16_nn_128x128",
            "gemm_bf16_nn_64x64",
            "gemm_bf16_nt_128x128",
            "gemm_bf16_nt_64x64",
            "gemm_fp16_nn_128x128",
            "gemm_fp16_nn_64x64",
            "gemm_fp16_nt_128x128",
            "gemm_fp16_nt_64x64",
        ]
    );
    let e = entry(&m, "gemm_fp16_nt_64x64");
    assert_eq!(e.file, "gemm_fp16.cu");
    // A table value names itself by `name` and lends its fields; a set splices into a list.
    assert_eq!(
        e.params,
        strings(&["a: *const f16", "n: i32", "flags: u32"])
    );
    // A string that is exactly one placeholder of an integer field is that integer.
    assert_eq!(e.block_sizes, vec![128]);
    assert_eq!(e.contract.min_blocks_per_sm, min_blocks(128, 2));
    assert_eq!(e.contract.max_registers, Some(255));
}

#[test]
fn family_entries_carry_their_family_and_axis_values() {
    let m = parse(
        r#"
[kernels.plain_f32]
file = "p.cu"

[families.rope]
name = "rope_{style}_{dtype}"
axes = { style = ["neox"], dtype = [{ name = "bf16", bytes = 2 }, "f32"] }
file = "rope.cu"

[families.one]
name = "one"
axes.dtype = ["f32"]
file = "one.cu"
"#,
    );
    assert_eq!(entry(&m, "plain_f32").family, None);
    let rope = entry(&m, "rope_neox_bf16").family.as_ref().unwrap();
    assert_eq!(rope.family, "rope");
    assert_eq!(
        rope.axes.iter().collect::<Vec<_>>(),
        [
            (&"dtype".to_string(), &"bf16".to_string()),
            (&"style".to_string(), &"neox".to_string())
        ]
    );
    assert_eq!(rope.dtype_pattern.as_deref(), Some("rope_neox_{dtype}"));
    let f32 = entry(&m, "rope_neox_f32").family.as_ref().unwrap();
    assert_eq!(f32.dtype_pattern, rope.dtype_pattern);
    // A name that leaves the dtype out has no pattern.
    assert_eq!(
        entry(&m, "one").family.as_ref().unwrap().dtype_pattern,
        None
    );
}

#[test]
fn a_family_without_axes_is_one_entry_named_by_its_key() {
    let m = parse(
        "[sets]\np = [\"x: u32\"]\n[families.single]\nfile = \"s.cu\"\nparams = \"@p\"\n\
         [families.\"k_{v}\"]\naxes.v = [1, 2]\nfile = \"k.cu\"\nblock_sizes = [\"{v}\"]\n",
    );
    assert_eq!(names(&m), ["k_1", "k_2", "single"]);
    assert_eq!(entry(&m, "single").params, strings(&["x: u32"]));
    assert_eq!(entry(&m, "k_2").block_sizes, vec![2]);
}

#[test]
fn placeholders_fill_any_string_of_an_entry() {
    let m = parse(
        r#"
[families.k]
name = "k_{v}"
axes.v = [{ name = "a", why = "a reason" }]
file = "{v}.cu"
arch.sm_80.exception = { allow = ["spills"], reason = "{v.why}: {{not a placeholder}}" }
"#,
    );
    let e = entry(&m, "k_a");
    assert_eq!(e.file, "a.cu");
    assert_eq!(
        e.arch["sm_80"].exception.as_ref().unwrap().reason,
        "a reason: {not a placeholder}"
    );
}

#[test]
fn when_overrides_matching_entries_in_order() {
    let m = parse(&format!(
        r#"{GEMM}
[[families.gemm.when]]
match = {{ layout = "nt" }}
dynamic_smem_bytes = 100
contract.require = ["LDSM"]

[[families.gemm.when]]
match = {{ layout = "nt", tile = ["64x64"], dtype = {{ ty = "f16" }} }}
dynamic_smem_bytes = 200
arch.sm_89.dynamic_smem_bytes = "{{tile.threads}}"
"#
    ));
    let smem = |n: &str| entry(&m, n).dynamic_smem_bytes;
    assert_eq!(smem("gemm_bf16_nn_64x64"), 0);
    assert_eq!(smem("gemm_bf16_nt_64x64"), 100);
    assert_eq!(smem("gemm_fp16_nt_128x128"), 100);
    // The later `when` wins where both hold; fields it leaves alone stay.
    let e = entry(&m, "gemm_fp16_nt_64x64");
    assert_eq!(e.dynamic_smem_bytes, 200);
    assert_eq!(e.contract.require, Some(strings(&["LDSM"])));
    assert_eq!(e.contract.max_registers, Some(255));
    assert_eq!(e.arch["sm_89"].dynamic_smem_bytes, Some(128));
    assert!(entry(&m, "gemm_bf16_nt_64x64").arch.is_empty());
}

#[test]
fn exclude_drops_combinations() {
    let m = parse(&format!(
        "{GEMM}exclude = [{{ layout = \"nt\", tile = \"64x64\" }}, {{ dtype = \"fp16\" }}]\n"
    ));
    assert_eq!(
        names(&m),
        [
            "gemm_bf16_nn_128x128",
            "gemm_bf16_nn_64x64",
            "gemm_bf16_nt_128x128"
        ]
    );
}

const GROUPS: &str = r#"
[arch_groups]
small_sm = ["sm_86", "sm_89", "sm_120"]
blackwell = ["sm_100", "sm_120"]
"#;

#[test]
fn arch_groups_stand_for_each_member_and_an_arch_key_overrides_them() {
    let m = parse(&format!(
        r#"{GROUPS}
[kernels.k]
file = "k.cu"
arch.small_sm = {{ max_registers = 40, min_blocks_per_sm = {{ block_size = 256, blocks = 6 }} }}
arch.sm_120 = {{ max_registers = 48 }}
arch.sm_80 = {{ max_registers = 32 }}

[families.f]
file = "f.cu"
arch.blackwell.exception = {{ allow = ["spills"], reason = "r" }}
"#
    ));
    let k = entry(&m, "k");
    assert_eq!(
        k.arch.keys().collect::<Vec<_>>(),
        ["sm_120", "sm_80", "sm_86", "sm_89"]
    );
    assert_eq!(k.arch["sm_86"].max_registers, Some(40));
    assert_eq!(k.arch["sm_120"].max_registers, Some(48));
    assert_eq!(k.arch["sm_120"].min_blocks_per_sm, min_blocks(256, 6));
    assert_eq!(k.arch["sm_80"].max_registers, Some(32));
    let f = entry(&m, "f");
    assert_eq!(f.arch.keys().collect::<Vec<_>>(), ["sm_100", "sm_120"]);
    // Seen by the contract lookup as the arch's own table.
    let c = m.contract_for("k", "sm_89").unwrap();
    assert_eq!(c.max_registers, Some(40));
}

#[test]
fn arch_group_mistakes_are_errors() {
    let e = error(&format!(
        "{GROUPS}[kernels.k]\nfile = \"k.cu\"\narch.blackwel.max_registers = 1\n"
    ));
    assert_eq!(
        e,
        "kernels.toml: [kernels.k]: arch.blackwel: unknown arch group `blackwel` (groups: blackwell, small_sm; arches are written sm_XX)"
    );
    let e = error("[kernels.k]\nfile = \"k.cu\"\narch.ampere.max_registers = 1\n");
    assert!(
        e.contains("unknown arch group `ampere` (no [arch_groups] are defined"),
        "{e}"
    );
    let e = error(&format!(
        "{GROUPS}[kernels.k]\nfile = \"k.cu\"\narch.small_sm.max_registers = 1\narch.blackwell.spills = true\n"
    ));
    assert!(
        e.contains("arch.blackwell and arch.small_sm both cover sm_120"),
        "{e}"
    );
    let e = error("[arch_groups]\nsm_9x = [\"sm_90\"]\n");
    assert!(
        e.contains("[arch_groups] `sm_9x`: a group name must not read as an arch"),
        "{e}"
    );
    let e = error("[arch_groups]\ng = [\"sm90\"]\n");
    assert!(
        e.contains("[arch_groups] `g`: write `sm90` as `sm_90`"),
        "{e}"
    );
    let e = error("[arch_groups]\ng = [\"sm_75\"]\n");
    assert!(
        e.contains("[arch_groups] `g`: unknown GPU arch `sm_75`"),
        "{e}"
    );
    assert!(error("[arch_groups]\ng = []\n").contains("at least one arch"));
    assert!(
        error("[arch_groups]\ng = [\"sm_80\", \"sm_80\"]\n").contains("`sm_80` is listed twice")
    );
    // An arch the build does not know stays for the manifest check to report, as before.
    let m = parse("[kernels.k]\nfile = \"k.cu\"\n[kernels.k.arch.sm_99]\nmax_registers = 1\n");
    assert!(entry(&m, "k").arch.contains_key("sm_99"));
}

#[test]
fn family_mistakes_name_the_family_the_entry_and_the_key() {
    let e = error(
        "[families.f]\nname = \"f_{dtype}\"\naxes.dtype = [\"bf16\"]\nfile = \"{dtyp}.cu\"\n",
    );
    assert_eq!(
        e,
        "kernels.toml: [families.f]: entry `f_bf16` (dtype=bf16): file: unknown placeholder `{dtyp}` (axes: dtype)"
    );
    let e = error(&GEMM.replace(", blocks = 1 }", " }"));
    assert!(
        e.contains("[families.gemm]: entry `gemm_bf16_nn_128x128` (dtype=bf16, layout=nn, tile=128x128): contract.min_blocks_per_sm.blocks: `{tile.blocks}`: axis `tile` value `128x128` has no field `blocks`"),
        "{e}"
    );
    let e = error(&GEMM.replace(
        "\"gemm_{dtype}_{layout}_{tile}\"",
        "\"gemm_{dtype}_{tile}\"",
    ));
    assert!(
        e.contains("[families.gemm]: makes `gemm_bf16_128x128` twice (dtype=bf16, layout=nn, tile=128x128; dtype=bf16, layout=nt, tile=128x128)"),
        "{e}"
    );
    let e = error(&GEMM.replace("\"@tiles\"", "\"@tile\""));
    assert!(
        e.contains(
            "[families.gemm]: axes.tile: unknown set `@tile` (sets: @dtypes, @params, @tiles)"
        ),
        "{e}"
    );
    // A filled value of the wrong kind, and a misspelt field, as the entry's fields say them.
    let e = error(&GEMM.replace("[\"{tile.threads}\"]", "[\"{tile}\"]"));
    assert!(
        e.contains("entry `gemm_bf16_nn_128x128` (dtype=bf16, layout=nn, tile=128x128): block_sizes: invalid type: string \"128x128\", expected u32"),
        "{e}"
    );
    let e = error(&GEMM.replace("max_registers = 255", "max_registers = \"r{tile}\""));
    assert!(
        e.contains("): contract.max_registers: invalid type: string \"r128x128\""),
        "{e}"
    );
    let e = error(&format!(
        "{GEMM}when = [{{ match = {{ tile = \"64x64\" }}, arch.sm_80.exception.allow = [] }}]\n"
    ));
    assert!(
        e.contains("entry `gemm_bf16_nn_64x64` (dtype=bf16, layout=nn, tile=64x64): when[0].arch.sm_80.exception: missing field `reason`"),
        "{e}"
    );
    let e = error(&GEMM.replace("block_sizes", "block_size"));
    assert!(
        e.contains("): block_size: unknown field `block_size`"),
        "{e}"
    );
    let e = error("[families.f]\nparams = []\n");
    assert!(
        e.contains("[families.f]: entry `f` (no axes): missing field `file`"),
        "{e}"
    );
    let e = error("[kernels.k]\nparams = []\n");
    assert!(e.contains("[kernels.k]: missing field `file`"), "{e}");
}

#[test]
fn axis_and_condition_mistakes_are_errors() {
    let family = |extra: &str| {
        error(&format!(
            "[families.f]\nname = \"f_{{v}}\"\nfile = \"f.cu\"\n{extra}"
        ))
    };
    let e = family("axes.v = []\n");
    assert!(
        e.contains("[families.f]: axes.v: an axis needs at least one value"),
        "{e}"
    );
    let e = family("axes.v = [\"a\", \"a\"]\n");
    assert!(e.contains("axes.v: `a` is listed twice"), "{e}");
    let e = family("axes.v = [{ ty = \"f16\" }]\n");
    assert!(
        e.contains("axes.v[0]: an axis value is a string, an integer or a table with a `name`"),
        "{e}"
    );
    let e = family("axes.v = [1.5]\n");
    assert!(e.contains("axes.v[0]: an axis value is"), "{e}");
    let e = family("axes.v = \"a\"\n");
    assert!(
        e.contains("axes.v: an axis is a list of values or `\"@SET\"`"),
        "{e}"
    );
    let e = family("axes.\"a b\" = [\"x\"]\n");
    assert!(e.contains("an axis name is letters, digits and `_`"), "{e}");
    let e = family("axes.v = [\"a\"]\nwhen = [{ match = { w = \"a\" }, block_sizes = [1] }]\n");
    assert!(
        e.contains("when[0].match: `w` is not an axis (axes: v)"),
        "{e}"
    );
    let e = family("axes.v = [\"a\"]\nwhen = [{ block_sizes = [1] }]\n");
    assert!(
        e.contains("when[0]: needs `match = { AXIS = VALUE, ... }`"),
        "{e}"
    );
    let e = family("axes.v = [\"a\"]\nwhen = [{ match = {} }]\n");
    assert!(e.contains("when[0].match: names no axis"), "{e}");
    let e =
        family("axes.v = [\"a\", \"b\"]\nwhen = [{ match = { v = \"c\" }, block_sizes = [1] }]\n");
    assert!(
        e.contains("[families.f]: when[0].match: holds for no entry of this family"),
        "{e}"
    );
    let e = family("axes.v = [\"a\", \"b\"]\nexclude = [{ v = \"a\" }, { v = \"z\" }]\n");
    assert!(
        e.contains("exclude[1]: holds for no entry of this family"),
        "{e}"
    );
    let e =
        family("axes.v = [\"a\"]\nwhen = [{ match = { v = \"a\" }, block_sizes = [\"{w}\"] }]\n");
    assert!(
        e.contains("entry `f_a` (v=a): when[0].block_sizes[0]: unknown placeholder `{w}`"),
        "{e}"
    );
    let e = error("[families.f]\nname = \"{v}\"\naxes.v = [1]\nfile = \"f.cu\"\n");
    assert!(
        e.contains("[families.f]: name: gives 1 for v=1; a name is a non-empty string"),
        "{e}"
    );
    let e = error("[families.f]\nname = \"\"\nfile = \"f.cu\"\n");
    assert!(e.contains("a name is a non-empty string"), "{e}");
    let e = error(
        "[families.f]\nname = \"f{a}{b}{c}{d}{e}\"\nfile = \"f.cu\"\n\
         axes = { a = \"@s\", b = \"@s\", c = \"@s\", d = \"@s\", e = \"@s\" }\n\
         [sets]\ns = [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]\n",
    );
    assert!(e.contains("its axes make more than 100000 entries"), "{e}");
}

#[test]
fn an_entry_made_twice_names_both_sources() {
    let e = error(
        "[kernels.k_a]\nfile = \"k.cu\"\n[families.k]\nname = \"k_{v}\"\naxes.v = [\"a\"]\nfile = \"k.cu\"\n",
    );
    assert_eq!(
        e,
        "kernels.toml: entry `k_a` is made twice: by [kernels.k_a] in kernels.toml and by [families.k] (v=a) in kernels.toml"
    );
}

#[test]
fn includes_merge_fragments_relative_to_the_including_file() {
    let m = load(
        vec![
            (
                "cuda/kernels.toml",
                "include = [\"frag/tiles.toml\"]\n[defaults]\ncontract.spills = false\n\
                 [families.g]\nname = \"g_{tile}\"\naxes.tile = \"@tiles\"\nfile = \"g.cu\"\n\
                 arch.big.max_registers = 1\n",
            ),
            (
                "cuda/frag/tiles.toml",
                "include = [\"../more.toml\", \"../frag/./tiles2.toml\"]\n[sets]\ntiles = [\"a\", \"b\"]\n",
            ),
            ("cuda/more.toml", "[arch_groups]\nbig = [\"sm_90\"]\n[kernels.m]\nfile = \"m.cu\"\n"),
            // Included twice (also by tiles.toml through another spelling): read once.
            ("cuda/frag/tiles2.toml", "include = [\"../more.toml\"]\n"),
        ],
        "cuda/kernels.toml",
    )
    .unwrap();
    assert_eq!(names(&m), ["g_a", "g_b", "m"]);
    // Defaults and groups are manifest-wide, whichever file defines them.
    assert_eq!(entry(&m, "m").contract.spills, Some(false));
    assert_eq!(entry(&m, "g_b").arch["sm_90"].max_registers, Some(1));
}

#[test]
fn include_mistakes_name_the_files() {
    let e = load(
        vec![
            (
                "k.toml",
                "include = [\"sub/a.toml\"]\n[sets]\ntiles = [\"x\"]\n",
            ),
            ("sub/a.toml", "[sets]\ntiles = [\"y\"]\n"),
        ],
        "k.toml",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "sub/a.toml: [sets.tiles] is defined in k.toml and again here; a name is defined once"
    );
    let e = load(
        vec![
            (
                "k.toml",
                "include = [\"a.toml\"]\n[defaults]\nfile = \"x.cu\"\n",
            ),
            ("a.toml", "[defaults]\nfile = \"y.cu\"\n"),
        ],
        "k.toml",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "a.toml: [defaults] is defined in k.toml and again here; keep one"
    );
    let e = load(vec![("k.toml", "include = [\"gone.toml\"]\n")], "k.toml").unwrap_err();
    assert_eq!(
        e.to_string(),
        "k.toml: include `gone.toml` (gone.toml): No such file or directory"
    );
    let e = load(
        vec![
            ("d/k.toml", "include = [\"a.toml\"]\n"),
            ("d/a.toml", "include = [\"../d/k.toml\"]\n"),
        ],
        "d/k.toml",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "d/a.toml: include `../d/k.toml` makes a cycle: d/k.toml -> d/a.toml -> d/k.toml"
    );
    let e = load(vec![("k.toml", "include = [\"k.toml\"]\n")], "k.toml").unwrap_err();
    assert!(
        e.to_string().contains("makes a cycle: k.toml -> k.toml"),
        "{e}"
    );
    let e = load(
        vec![
            ("k.toml", "include = [\"a.toml\"]\n"),
            ("a.toml", "[kernel]\n"),
        ],
        "k.toml",
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("a.toml: "), "{e}");
    assert!(e.to_string().contains("unknown field `kernel`"), "{e}");
    // Text has no folder: its includes cannot be read.
    let e = error("include = [\"a.toml\"]\n");
    assert!(
        e.contains(
            "kernels.toml: include `a.toml` (a.toml): a manifest given as text has no folder"
        ),
        "{e}"
    );
}

#[test]
fn load_reads_includes_from_disk() {
    let dir = std::env::temp_dir().join(format!("cubins-manifest-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("frag")).unwrap();
    std::fs::write(dir.join("kernels.toml"), "include = [\"frag/sets.toml\"]\n[families.k]\nname = \"k_{t}\"\naxes.t = \"@t\"\nfile = \"k.cu\"\n").unwrap();
    std::fs::write(dir.join("frag/sets.toml"), "[sets]\nt = [\"x\"]\n").unwrap();
    let m = Manifest::load(&dir.join("kernels.toml"));
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(names(&m.unwrap()), ["k_x"]);
    let e = Manifest::load(&dir.join("kernels.toml")).unwrap_err();
    assert!(e.path.ends_with("kernels.toml"), "{e}");
}

#[test]
fn the_documented_example_expands_as_it_says() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/manifest.md"))
        .expect("docs/manifest.md");
    let example = doc
        .split("```toml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/manifest.md has a toml example");
    let m = parse(example);
    assert_eq!(m.kernels.len(), 9, "{:?}", names(&m));
    let e = entry(&m, "gemm_fp16_nt_64x64");
    assert_eq!(e.file, "gemm_fp16.cu");
    assert_eq!(e.params[0], "a: *const f16");
    assert_eq!(
        (e.block_sizes.as_slice(), e.dynamic_smem_bytes),
        (&[128][..], 32768)
    );
    assert_eq!(e.contract.forbid, Some(strings(&["LDL", "STL"])));
    assert_eq!(e.arch.keys().collect::<Vec<_>>(), ["sm_100", "sm_120"]);
    assert_eq!(entry(&m, "gemm_bf16_nn_128x128").dynamic_smem_bytes, 0);
}
