//! Standard output that may be closed under us: `harmonia inspect X | head
//! -1` closes the pipe after one line. [`outln!`] writes like `println!`,
//! but a closed pipe ends the command quietly
//! (exit 0: the reader chose to stop) instead of panicking, and any other
//! write failure is one line on stderr and exit 1.

use std::io::{ErrorKind, Write};

/// `println!` to stdout, ending the command quietly if stdout is closed.
macro_rules! outln {
    () => { $crate::output::write(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::output::write(format_args!("{}\n", format_args!($($arg)*))) };
}

/// Write to stdout, or end the process as the module doc says.
pub fn write(args: std::fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    if let Err(error) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        drop(stdout);
        end_on_write_error(&error);
    }
}

/// End the process after stdout failed: quietly when the reader is gone.
pub fn end_on_write_error(error: &std::io::Error) -> ! {
    if error.kind() == ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("harmonia: cannot write to stdout: {error}");
    std::process::exit(1);
}

/// Whether `error` was caused by writing to a closed stdout.
pub fn is_closed_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .filter_map(|cause| cause.downcast_ref::<std::io::Error>())
        .any(|io| io.kind() == ErrorKind::BrokenPipe)
}
