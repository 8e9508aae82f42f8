//! `harmonia new TOOL --lang rust|python|js --world public|workspace`: a
//! ready tool project, written from the templates under `templates/`,
//! which are embedded in the binary (rust-embed), so nothing is fetched.
//!
//! Each template holds one example per world (`hn_top_story` reads the
//! public web, `posts_by_weekday` the caller's workspace). The project gets
//! the chosen world's example renamed to TOOL, the language's contract
//! module, its build script or cargo files, and `wit/tools.wit`, so it
//! builds and passes `harmonia conformance` as written.

use crate::setup::UsageError;
use anyhow::{Context, Result};
use clap::ValueEnum;
use harmonia_contract::codes::is_valid_tool_name;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The templates, without build outputs.
#[derive(rust_embed::Embed)]
#[folder = "../templates/"]
#[exclude = "*.wasm"]
#[exclude = "*/target/*"]
#[exclude = "*/node_modules/*"]
#[exclude = "*/__pycache__/*"]
struct Templates;

/// The WIT every foreign build script reads.
const TOOLS_WIT: &str = include_str!("../../../wit/tools.wit");

/// The guest SDK of the checkout this binary was built from; a Rust
/// project depends on it by path when it is still there.
const CHECKOUT_SDK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../guest/sdk");

/// A tool's language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Lang {
    /// Rust with the guest SDK (cargo, target wasm32-wasip2).
    Rust,
    /// Python (componentize-py).
    Python,
    /// JavaScript (componentize-js).
    Js,
}

/// The world a tool is built for: the capability it imports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum World {
    /// `public-tool`: reads allow-listed public web origins.
    Public,
    /// `workspace-tool`: reads the caller's workspace.
    Workspace,
}

impl Lang {
    fn name(self) -> &'static str {
        match self {
            Self::Rust => "Rust",
            Self::Python => "Python",
            Self::Js => "JavaScript",
        }
    }
}

impl World {
    fn name(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Workspace => "workspace",
        }
    }

    /// The template's example tool for this world.
    fn example(self) -> &'static str {
        match self {
            Self::Public => "hn_top_story",
            Self::Workspace => "posts_by_weekday",
        }
    }
}

/// The lines of the Rust template's `src/lib.rs` that pull the workspace
/// example into its tests; a project has no `worlds/` to pull from.
const RUST_WORKSPACE_TESTS: &str = "// The workspace example's logic and tests, natively (`cargo test`).
#[cfg(test)]
#[path = \"../worlds/workspace.rs\"]
mod workspace_example;

";

/// One file of the project: where it comes from in the templates (or its
/// text), and where it goes.
enum Source {
    Template(String),
    Text(String),
}

/// The project's README: what it is and the three commands.
fn readme(tool: &str, lang: Lang, world: World) -> String {
    let (build, test, component) = match lang {
        Lang::Rust => (
            "cargo build --release --target wasm32-wasip2",
            "cargo test",
            format!("target/wasm32-wasip2/release/{tool}.wasm"),
        ),
        Lang::Python => ("./build.sh", "PYTHONPATH=src python3 -m unittest", format!("{tool}.wasm")),
        Lang::Js => ("./build.sh", "npm test", format!("{tool}.wasm")),
    };
    format!(
        "# {tool}\n\nA Harmonia tool in {}, world `{}-tool`, written by `harmonia new` from the \
         template's example; make it yours. The guide is `docs/plugin-authors.md` of the Harmonia \
         checkout (section 7 is the contract every tool follows).\n\n```sh\n{build}\n{test}   \
         # the logic, natively\nharmonia conformance {component}\n```\n",
        lang.name(),
        world.name()
    )
}

/// The files of a project, as (source, path in the project).
fn plan(tool: &str, lang: Lang, world: World) -> Vec<(Source, String)> {
    let example = world.example();
    let w = world.name();
    let template = |path: &str| Source::Template(path.to_owned());
    let mut files = match lang {
        Lang::Python => vec![
            (template("python-tool/build.sh"), "build.sh".into()),
            (template("python-tool/.gitignore"), ".gitignore".into()),
            (template("python-tool/src/harmonia_tool.py"), "src/harmonia_tool.py".into()),
            (template("python-tool/src/component.py"), "src/component.py".into()),
            (template(&format!("python-tool/src/{w}_app.py")), format!("src/{w}_app.py")),
            (template(&format!("python-tool/src/{example}.py")), "src/TOOL.py".into()),
            (template(&format!("python-tool/test_{example}.py")), "test_TOOL.py".into()),
        ],
        Lang::Js => vec![
            (template("js-tool/build.sh"), "build.sh".into()),
            (template("js-tool/.gitignore"), ".gitignore".into()),
            (template("js-tool/package.json"), "package.json".into()),
            (template("js-tool/src/harmonia_tool.js"), "src/harmonia_tool.js".into()),
            (template("js-tool/src/component.js"), "src/component.js".into()),
            (template(&format!("js-tool/src/{w}_app.js")), format!("src/{w}_app.js")),
            (template(&format!("js-tool/src/{example}.js")), "src/TOOL.js".into()),
            (template(&format!("js-tool/test/{example}.test.js")), "test/TOOL.test.js".into()),
        ],
        Lang::Rust => {
            let lib = match world {
                World::Public => "plugin-template/src/lib.rs",
                World::Workspace => "plugin-template/worlds/workspace.rs",
            };
            vec![
                (template("plugin-template/Cargo.toml"), "Cargo.toml".into()),
                (template("plugin-template/Cargo.lock"), "Cargo.lock".into()),
                (template("plugin-template/rust-toolchain.toml"), "rust-toolchain.toml".into()),
                (template("plugin-template/.cargo/config.toml"), ".cargo/config.toml".into()),
                (template("plugin-template/.gitignore"), ".gitignore".into()),
                (template(lib), "src/lib.rs".into()),
            ]
        }
    };
    if lang != Lang::Rust {
        files.push((Source::Text(TOOLS_WIT.to_owned()), "wit/tools.wit".into()));
    }
    files.push((Source::Text(readme(tool, lang, world)), "README.md".into()));
    files
}

/// The template text made the project's: the example's name (in every
/// spelling) becomes the tool's, the build script's default world is the
/// chosen one, and a Rust project's SDK path points at this checkout.
fn adapt(text: &str, tool: &str, lang: Lang, world: World) -> String {
    let mut text = text.to_owned();
    for example in [World::Public.example(), World::Workspace.example()] {
        text = text.replace(example, tool).replace(&example.replace('_', "-"), &tool.replace('_', "-"));
    }
    text = text.replace("\nworld=public\n", &format!("\nworld={}\n", world.name()));
    if lang == Lang::Rust {
        text = text.replace(RUST_WORKSPACE_TESTS, "");
        let sdk = Path::new(CHECKOUT_SDK);
        if let Ok(sdk) = sdk.canonicalize() {
            text = text.replace(
                "harmonia-guest-sdk = { path = \"../../guest/sdk\" }",
                &format!("harmonia-guest-sdk = {{ path = {:?} }}", sdk.display().to_string()),
            );
        }
    }
    text
}

/// Write the project; the next steps on stdout.
pub fn run(tool: &str, lang: Lang, world: World, dir: Option<&Path>) -> Result<ExitCode> {
    if !is_valid_tool_name(tool) {
        return Err(UsageError(format!(
            "`{tool}` is not a tool name: lowercase words joined by `_`, at least two (`count_posts`)"
        ))
        .into());
    }
    let dir: PathBuf = dir.map_or_else(|| PathBuf::from(tool), Path::to_owned);
    if dir.read_dir().is_ok_and(|mut entries| entries.next().is_some()) {
        return Err(
            UsageError(format!("{} exists and is not empty; choose another --dir", dir.display())).into()
        );
    }
    for (source, path) in plan(tool, lang, world) {
        let text = match source {
            Source::Text(text) => text,
            Source::Template(name) => {
                let file =
                    Templates::get(&name).with_context(|| format!("template file {name} is not embedded"))?;
                String::from_utf8(file.data.into_owned()).with_context(|| format!("{name} is not UTF-8"))?
            }
        };
        let target = dir.join(path.replace("TOOL", tool));
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&target, adapt(&text, tool, lang, world))
            .with_context(|| format!("cannot write {}", target.display()))?;
        if target.extension().is_some_and(|extension| extension == "sh") {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755))?;
        }
    }
    let shown = dir.display();
    let (build, component) = match lang {
        Lang::Rust => (
            "cargo build --release --target wasm32-wasip2".to_owned(),
            format!("target/wasm32-wasip2/release/{tool}.wasm"),
        ),
        Lang::Python | Lang::Js => ("./build.sh".to_owned(), format!("{tool}.wasm")),
    };
    outln!("created {shown}: `{tool}`, a {} tool in {}", world.name(), lang.name());
    outln!("next: cd {shown} && {build} && harmonia conformance {component}");
    outln!("guide: docs/plugin-authors.md (section 7 is the contract every tool follows)");
    if lang == Lang::Rust && Path::new(CHECKOUT_SDK).canonicalize().is_err() {
        outln!("then: point harmonia-guest-sdk in Cargo.toml at your Harmonia checkout's guest/sdk");
    }
    Ok(ExitCode::SUCCESS)
}
