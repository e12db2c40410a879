//! `reclaimlab._native`: the reclaimlab command line, called in-process from Python.
//!
//! Every Python function of the package (`reclaimlab.run`, `compare`, `sweep`, ...) builds a
//! command line and calls [`cli`] with it, so Python runs exactly the CLI's commands, with
//! its validation and its errors, and cannot drift from it.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    _native,
    ReclaimlabError,
    PyException,
    "A reclaimlab command failed: bad input or an option that would do nothing (the CLI's \
     one-line error, which exits with status 2 on the command line)."
);

/// Runs `reclaimlab ARGV...` (without the program name) and returns what it printed on
/// stdout; raises ReclaimlabError with the CLI's one-line error. The GIL is released while
/// it runs.
#[pyfunction]
fn cli(py: Python<'_>, argv: Vec<String>) -> PyResult<String> {
    let args: Vec<String> = std::iter::once("reclaimlab".to_string())
        .chain(argv)
        .collect();
    let r = py.detach(|| reclaimlab_cli::run_captured(args));
    match r {
        Ok(out) => String::from_utf8(out)
            .map_err(|e| ReclaimlabError::new_err(format!("output is not UTF-8: {e}"))),
        Err(e) => Err(ReclaimlabError::new_err(e)),
    }
}

/// The long options of a subcommand: (name, takes a value, repeatable); None for an unknown
/// subcommand.
#[pyfunction]
fn options(subcommand: &str) -> Option<Vec<(String, bool, bool)>> {
    reclaimlab_cli::options_of(subcommand)
}

/// The model version results are keyed by (crate version and a hash of the model's sources).
#[pyfunction]
fn model_version() -> &'static str {
    reclaimlab_cli::model_version()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(cli, m)?)?;
    m.add_function(wrap_pyfunction!(options, m)?)?;
    m.add_function(wrap_pyfunction!(model_version, m)?)?;
    m.add("ReclaimlabError", m.py().get_type::<ReclaimlabError>())?;
    Ok(())
}
