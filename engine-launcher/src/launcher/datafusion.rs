//! The command line of `kumiho-engine`, Kumiho's DataFusion engine, which registers itself.
//!
//! `kumiho-engine --host H --port 0 [--config FILE] [--warehouse W | --default-warehouse W]
//! [--time-zone Z] [--log-level L] <registry flags>`, with
//! the secret in `KUMIHO_ENGINE_SECRET`. Tables declared in the cluster config are written to
//! a YAML file next to the engine's log and passed with `--config`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{installed_program, EngineBuilder, EngineCommand, EngineLaunchSpec, EngineSettings};
use crate::engine_ref::EngineType;
use crate::error::LaunchError;
use crate::self_registration::EngineRegistrationArgs;

/// `kumiho-engine` settings from the cluster config.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DataFusionSettings {
    /// An engine config file the operator wrote, passed as is; excludes `tables`.
    pub config_file: Option<PathBuf>,
    /// Table declarations (`name: {format: parquet, location: /data/t/}`), passed through to
    /// the engine's config file unchanged: the engine owns their meaning.
    pub tables: BTreeMap<String, serde_yaml_ng::Value>,
    /// The engine's `--log-level`, if set.
    pub log_level: Option<String>,
    /// Where the engine keeps databases and tables (`--warehouse`: a directory or an
    /// object-store URL); None: the builder's default warehouse, if it has one.
    pub warehouse: Option<String>,
    /// The time zone the engine's sessions start in (`--time-zone`); None: the engine's
    /// default, UTC. The engine checks it and refuses to start with one that is no zone.
    pub time_zone: Option<String>,
}

/// Builds `kumiho-engine` command lines.
#[derive(Debug, Clone)]
pub struct DataFusionBuilder {
    program: PathBuf,
    /// The warehouse of clusters that name none (`--default-warehouse`; an engine config
    /// file's `warehouse` wins over it).
    default_warehouse: Option<String>,
}

impl DataFusionBuilder {
    /// The engine program's file name.
    pub const PROGRAM_NAME: &'static str = "kumiho-engine";

    /// A builder running `program`.
    pub fn new(program: impl Into<PathBuf>) -> DataFusionBuilder {
        DataFusionBuilder {
            program: program.into(),
            default_warehouse: None,
        }
    }

    /// The warehouse of engines whose cluster names none (the gateway's `WORK/warehouse`).
    pub fn with_default_warehouse(mut self, location: impl Into<String>) -> DataFusionBuilder {
        self.default_warehouse = Some(location.into());
        self
    }

    /// A builder running the configured program, else `kumiho-engine` next to the running
    /// executable (where the gateway and engine are installed together).
    pub fn locate(configured: Option<&Path>) -> Result<DataFusionBuilder, LaunchError> {
        let program = installed_program(configured, Self::PROGRAM_NAME);
        if !program.is_file() {
            return Err(LaunchError::ProgramNotFound { program });
        }
        Ok(DataFusionBuilder::new(program))
    }

    /// The program run.
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// The `--config` file for `settings`, writing declared tables next to the engine's log.
    fn config_file(
        settings: &DataFusionSettings,
        log_path: &Path,
    ) -> Result<Option<PathBuf>, LaunchError> {
        let bad = |reason: String| LaunchError::BadSettings {
            engine_type: EngineType::DataFusion,
            reason,
        };
        match (&settings.config_file, settings.tables.is_empty()) {
            (Some(_), false) => Err(bad(
                "the cluster config sets both `config-file` and `tables`; declare the tables in the config file instead".to_owned(),
            )),
            (Some(file), true) => Ok(Some(file.clone())),
            (None, true) => Ok(None),
            (None, false) => {
                let mut config = serde_yaml_ng::Mapping::new();
                config.insert(
                    "tables".into(),
                    serde_yaml_ng::to_value(&settings.tables)
                        .map_err(|e| bad(format!("tables cannot be written as YAML: {e}")))?,
                );
                let text = serde_yaml_ng::to_string(&config)
                    .map_err(|e| bad(format!("tables cannot be written as YAML: {e}")))?;
                let path = log_path.with_extension("yaml");
                std::fs::write(&path, text).map_err(|source| LaunchError::WorkDir {
                    path: path.clone(),
                    source,
                })?;
                Ok(Some(path))
            }
        }
    }
}

impl EngineBuilder for DataFusionBuilder {
    fn engine_type(&self) -> EngineType {
        EngineType::DataFusion
    }

    fn build(
        &self,
        spec: &EngineLaunchSpec,
        registration: &EngineRegistrationArgs,
    ) -> Result<EngineCommand, LaunchError> {
        let EngineSettings::DataFusion(settings) = &spec.settings else {
            return Err(LaunchError::settings_of_another_type(
                EngineType::DataFusion,
            ));
        };
        let mut args = vec![
            "--host".to_owned(),
            spec.bind_host.clone(),
            "--port".to_owned(),
            "0".to_owned(),
        ];
        if let Some(parent) = spec.log_path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| LaunchError::WorkDir {
                path: parent.to_owned(),
                source,
            })?;
        }
        if let Some(config) = Self::config_file(settings, &spec.log_path)? {
            args.push("--config".to_owned());
            args.push(config.display().to_string());
        }
        match (&settings.warehouse, &self.default_warehouse) {
            (Some(warehouse), _) => {
                args.push("--warehouse".to_owned());
                args.push(warehouse.clone());
            }
            (None, Some(default)) => {
                args.push("--default-warehouse".to_owned());
                args.push(default.clone());
            }
            (None, None) => {}
        }
        if let Some(zone) = &settings.time_zone {
            args.push("--time-zone".to_owned());
            args.push(zone.clone());
        }
        if let Some(level) = &settings.log_level {
            args.push("--log-level".to_owned());
            args.push(level.clone());
        }
        args.extend(registration.to_args());
        Ok(EngineCommand {
            program: self.program.clone(),
            args,
            env: spec.engine_env(),
        })
    }
}

#[cfg(test)]
mod tests;
