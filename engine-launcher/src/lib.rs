//! Engine references, registries, launch locks and launchers: how Kumiho finds or starts an engine.
#![forbid(unsafe_code)]
