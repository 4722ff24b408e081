//! The fault-injection seam of bringing a change home. Every write `home/` makes — a byte saved in
//! the run folder, a record, a file or folder in the user's tree, a git command — first asks the
//! [`Faults`] it was given whether to go on; a test's `Faults` makes one step (or every step from
//! one on, as a crash would) fail, and checks that the user's files and the record still agree.
//! Real callers pass [`NoFaults`]. Nothing here is global: the value travels down with the call.

use std::fmt;
use std::io;

/// One write of an apply or an undo, named for a failure message.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A file written in the run folder (saved bytes, the scratch tree).
    Save(String),
    /// `applied.json` written (or put back as it was) with this state.
    Record(&'static str),
    /// Leftovers of an interrupted step removed beside a path.
    Tidy(String),
    /// The new bytes written beside a path, under a temporary name.
    Temp(String),
    /// A path's file moved aside, to be checked before anything replaces it.
    Aside(String),
    /// A file moved aside put back at its path.
    PutBack(String),
    /// The new file moved to its path.
    Place(String),
    /// The file moved aside removed, once its path holds the new one.
    Drop(String),
    /// A missing folder made for a new file.
    MakeDir(String),
    /// A folder emptied by a removal removed.
    RemoveDir(String),
    /// A git command.
    Git(&'static str),
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Save(name) => write!(f, "save {name}"),
            Step::Record(state) => write!(f, "record {state}"),
            Step::Tidy(path) => write!(f, "tidy beside {path}"),
            Step::Temp(path) => write!(f, "write the new {path}"),
            Step::Aside(path) => write!(f, "move {path} aside"),
            Step::PutBack(path) => write!(f, "put {path} back"),
            Step::Place(path) => write!(f, "place {path}"),
            Step::Drop(path) => write!(f, "drop the old {path}"),
            Step::MakeDir(path) => write!(f, "make folder {path}"),
            Step::RemoveDir(path) => write!(f, "remove folder {path}"),
            Step::Git(command) => write!(f, "git {command}"),
        }
    }
}

/// Asked before every write; an error fails that write as if the disk or git had.
#[doc(hidden)]
pub trait Faults {
    fn before(&self, step: &Step) -> io::Result<()>;
}

/// No fault: every write goes ahead.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default)]
pub struct NoFaults;

impl Faults for NoFaults {
    fn before(&self, _step: &Step) -> io::Result<()> {
        Ok(())
    }
}
