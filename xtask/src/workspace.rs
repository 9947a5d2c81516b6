//! What the workspace contains, as far as the tasks need to know: the test targets that bring
//! their own harness (`[[test]] harness = false`). Where cargo builds is
//! [`cordon_test_support::target_dir`].
//!
//! `cargo metadata` lists targets but not their `harness` flag, so that one fact is read from
//! each member's manifest.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use cordon_test_support::error::Error;
use serde::Deserialize;

use crate::ci::Ctx;

/// Dependencies that make a custom harness speak libtest's `--list --format terse` protocol,
/// which is what cargo-nextest needs to run it. A harness built on anything else is run by
/// `cargo test` instead.
const NEXTEST_COMPATIBLE_HARNESSES: &[&str] = &["libtest-mimic", "datatest-stable"];

/// An integration test target declared with `harness = false`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomHarnessTest {
    pub package: String,
    pub target: String,
    /// Whether cargo-nextest can list and run it (see [`NEXTEST_COMPATIBLE_HARNESSES`]).
    pub nextest_compatible: bool,
}

impl CustomHarnessTest {
    /// The nextest binary ID: `<package>::<test target>`.
    pub fn binary_id(&self) -> String {
        format!("{}::{}", self.package, self.target)
    }
}

/// Finds every `harness = false` test target of the workspace members.
pub fn custom_harness_tests(ctx: &Ctx) -> Result<Vec<CustomHarnessTest>, Error> {
    let json = ctx
        .cargo(["metadata", "--format-version", "1", "--no-deps", "--locked"])
        .read()?;
    let metadata: Metadata = serde_json::from_str(&json).map_err(Error::Metadata)?;
    let mut found = Vec::new();
    for package in &metadata.packages {
        let manifest = read_manifest(&package.manifest_path)?;
        let without_harness = manifest.harness_false_names();
        let nextest_compatible = package
            .dependencies
            .iter()
            .any(|dep| NEXTEST_COMPATIBLE_HARNESSES.contains(&dep.name.as_str()));
        for target in &package.targets {
            if target.kind.iter().any(|k| k == "test") && without_harness.contains(&target.name) {
                found.push(CustomHarnessTest {
                    package: package.name.clone(),
                    target: target.name.clone(),
                    nextest_compatible,
                });
            }
        }
    }
    Ok(found)
}

fn read_manifest(path: &Path) -> Result<Manifest, Error> {
    let text = fs::read_to_string(path).map_err(|source| Error::ManifestRead {
        path: path.to_owned(),
        source,
    })?;
    toml::from_str(&text).map_err(|source| Error::ManifestParse {
        path: path.to_owned(),
        source: Box::new(source),
    })
}

/// The subset of `cargo metadata --format-version 1` that is read here.
#[derive(Debug, Deserialize)]
struct Metadata {
    packages: Vec<Package>,
}

#[derive(Debug, Deserialize)]
struct Package {
    name: String,
    manifest_path: PathBuf,
    targets: Vec<Target>,
    dependencies: Vec<Dependency>,
}

#[derive(Debug, Deserialize)]
struct Target {
    name: String,
    kind: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct Dependency {
    name: String,
}

/// The subset of a member's `Cargo.toml` that is read here.
#[derive(Debug, Default, Deserialize)]
struct Manifest {
    #[serde(default)]
    test: Vec<TestSection>,
}

#[derive(Debug, Deserialize)]
struct TestSection {
    name: Option<String>,
    path: Option<PathBuf>,
    #[serde(default = "harness_default")]
    harness: bool,
}

fn harness_default() -> bool {
    true
}

impl Manifest {
    /// Target names of the `[[test]]` sections with `harness = false`; a section without a
    /// `name` is named after its file, as cargo does.
    fn harness_false_names(&self) -> BTreeSet<String> {
        self.test
            .iter()
            .filter(|t| !t.harness)
            .filter_map(|t| {
                t.name.clone().or_else(|| {
                    t.path
                        .as_deref()
                        .and_then(Path::file_stem)
                        .map(|stem| stem.to_string_lossy().into_owned())
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_harness_false_sections_are_custom() -> Result<(), toml::de::Error> {
        let manifest: Manifest = toml::from_str(
            r#"
            [package]
            name = "demo"

            [[test]]
            name = "kernel"
            harness = false

            [[test]]
            name = "ordinary"

            [[test]]
            path = "tests/escape.rs"
            harness = false
            "#,
        )?;
        let names: Vec<_> = manifest.harness_false_names().into_iter().collect();
        assert_eq!(names, ["escape", "kernel"]);
        Ok(())
    }

    #[test]
    fn a_manifest_without_test_sections_has_none() -> Result<(), toml::de::Error> {
        let manifest: Manifest = toml::from_str("[package]\nname = \"demo\"\n")?;
        assert!(manifest.harness_false_names().is_empty());
        Ok(())
    }
}
