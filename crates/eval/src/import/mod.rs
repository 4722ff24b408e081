//! Importers for public benchmarks.
