//! The strict mode's seccomp filter, compiled by hand to classic BPF for bwrap's
//! `--seccomp FD` (which reads an array of `struct sock_filter` until end of file).
//!
//! Refused, with an errno so programs can fall back or report it:
//! - `ptrace`, `process_vm_readv`, `process_vm_writev` (`EPERM`): no debugging or reading the
//!   memory of other processes of the sandbox;
//! - `io_uring_setup`, `io_uring_enter`, `io_uring_register` (`ENOSYS`, which io_uring users
//!   treat as "not available"): a large kernel surface that bypasses seccomp for the
//!   operations it queues;
//! - `socket` with any family but `AF_UNIX` (`EAFNOSUPPORT`): note this also refuses loopback
//!   TCP inside the sandbox, which some test suites use — the reason the filter is optional;
//! - `add_key`, `request_key`, `keyctl` (`EPERM`): the kernel keyrings are per user, not per
//!   namespace, so a command running as root could otherwise read root's keys.
//!
//! The filter first checks the architecture: a syscall made through another ABI (32-bit
//! `int 0x80` on x86_64) kills the process, as does any x32 syscall number, since the
//! numbers checked here are only the native ones.

use std::io::{self, Seek, Write};

/// `BPF_LD | BPF_W | BPF_ABS`.
const BPF_LD_W_ABS: u16 = 0x20;
/// `BPF_JMP | BPF_JEQ | BPF_K`.
const BPF_JMP_JEQ_K: u16 = 0x15;
/// `BPF_JMP | BPF_JGE | BPF_K`.
const BPF_JMP_JGE_K: u16 = 0x35;
/// `BPF_RET | BPF_K`.
const BPF_RET_K: u16 = 0x06;

const RET_KILL_PROCESS: u32 = 0x8000_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const RET_ALLOW: u32 = 0x7fff_0000;

/// Offsets into `struct seccomp_data`.
const OFFSET_NR: u32 = 0;
const OFFSET_ARCH: u32 = 4;
/// The low 32 bits of `args[0]` on a little-endian machine.
const OFFSET_ARG0_LOW: u32 = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Insn {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

fn stmt(code: u16, k: u32) -> Insn {
    Insn {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

/// `if A == k` (or `>=`): fall through to the next instruction when true, skip one when
/// false — every test here is followed by its own `ret`.
fn test(code: u16, k: u32) -> Insn {
    Insn {
        code,
        jt: 0,
        jf: 1,
        k,
    }
}

#[cfg(target_arch = "x86_64")]
mod arch {
    pub(super) const AUDIT_ARCH: u32 = 0xC000_003E;
    /// x32 syscalls have this bit set.
    pub(super) const X32_BIT: Option<u32> = Some(0x4000_0000);
}

#[cfg(target_arch = "aarch64")]
mod arch {
    pub(super) const AUDIT_ARCH: u32 = 0xC000_00B7;
    pub(super) const X32_BIT: Option<u32> = None;
}

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn nr(number: libc::c_long) -> u32 {
    // Syscall numbers are small and non-negative.
    u32::try_from(number).unwrap_or(u32::MAX)
}

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn errno(value: libc::c_int) -> u32 {
    RET_ERRNO | (u32::try_from(value).unwrap_or(1) & 0xffff)
}

/// The filter's instructions.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn program() -> Vec<Insn> {
    let denied = [
        (libc::SYS_ptrace, libc::EPERM),
        (libc::SYS_process_vm_readv, libc::EPERM),
        (libc::SYS_process_vm_writev, libc::EPERM),
        (libc::SYS_io_uring_setup, libc::ENOSYS),
        (libc::SYS_io_uring_enter, libc::ENOSYS),
        (libc::SYS_io_uring_register, libc::ENOSYS),
        (libc::SYS_add_key, libc::EPERM),
        (libc::SYS_request_key, libc::EPERM),
        (libc::SYS_keyctl, libc::EPERM),
    ];
    let mut p = vec![
        stmt(BPF_LD_W_ABS, OFFSET_ARCH),
        // The native architecture jumps over the kill.
        Insn {
            code: BPF_JMP_JEQ_K,
            jt: 1,
            jf: 0,
            k: arch::AUDIT_ARCH,
        },
        stmt(BPF_RET_K, RET_KILL_PROCESS),
        stmt(BPF_LD_W_ABS, OFFSET_NR),
    ];
    if let Some(bit) = arch::X32_BIT {
        p.push(test(BPF_JMP_JGE_K, bit));
        p.push(stmt(BPF_RET_K, RET_KILL_PROCESS));
    }
    for (number, error) in denied {
        p.push(test(BPF_JMP_JEQ_K, nr(number)));
        p.push(stmt(BPF_RET_K, errno(error)));
    }
    // `socket`: allowed only for AF_UNIX.
    p.push(Insn {
        code: BPF_JMP_JEQ_K,
        jt: 1,
        jf: 0,
        k: nr(libc::SYS_socket),
    });
    p.push(stmt(BPF_RET_K, RET_ALLOW));
    p.push(stmt(BPF_LD_W_ABS, OFFSET_ARG0_LOW));
    p.push(test(
        BPF_JMP_JEQ_K,
        u32::try_from(libc::AF_UNIX).unwrap_or(1),
    ));
    p.push(stmt(BPF_RET_K, RET_ALLOW));
    p.push(stmt(BPF_RET_K, errno(libc::EAFNOSUPPORT)));
    p
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn program() -> Vec<Insn> {
    Vec::new()
}

/// The program as bwrap reads it: `struct sock_filter` in native byte order.
fn encode(program: &[Insn]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(program.len() * 8);
    for insn in program {
        bytes.extend_from_slice(&insn.code.to_ne_bytes());
        bytes.push(insn.jt);
        bytes.push(insn.jf);
        bytes.extend_from_slice(&insn.k.to_ne_bytes());
    }
    bytes
}

/// An unnamed temporary file holding the compiled filter, positioned at its start, for
/// `--seccomp`. Fails on an architecture the filter is not written for.
pub(crate) fn program_file() -> io::Result<std::fs::File> {
    let program = program();
    if program.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "the strict mode's seccomp filter is written for x86_64 and aarch64 only",
        ));
    }
    let mut file = tempfile::tempfile()?;
    file.write_all(&encode(&program))?;
    file.rewind()?;
    Ok(file)
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Runs the filter the way the kernel does, for one syscall on this architecture.
    fn run(program: &[Insn], arch: u32, number: u32, arg0: u32) -> u32 {
        let mut acc = 0u32;
        let mut pc = 0usize;
        loop {
            let insn = program[pc];
            match insn.code {
                BPF_LD_W_ABS => {
                    acc = match insn.k {
                        OFFSET_NR => number,
                        OFFSET_ARCH => arch,
                        OFFSET_ARG0_LOW => arg0,
                        other => panic!("unexpected load at {other}"),
                    };
                    pc += 1;
                }
                BPF_JMP_JEQ_K | BPF_JMP_JGE_K => {
                    let hit = if insn.code == BPF_JMP_JEQ_K {
                        acc == insn.k
                    } else {
                        acc >= insn.k
                    };
                    pc += 1 + usize::from(if hit { insn.jt } else { insn.jf });
                }
                BPF_RET_K => return insn.k,
                other => panic!("unexpected opcode {other:#x}"),
            }
        }
    }

    #[test]
    fn refuses_what_the_header_lists_and_allows_the_rest() {
        let p = program();
        let native = arch::AUDIT_ARCH;
        let cases = [
            ("read", run(&p, native, nr(libc::SYS_read), 0)),
            ("ptrace", run(&p, native, nr(libc::SYS_ptrace), 0)),
            (
                "io_uring_setup",
                run(&p, native, nr(libc::SYS_io_uring_setup), 0),
            ),
            ("keyctl", run(&p, native, nr(libc::SYS_keyctl), 0)),
            ("socket(AF_UNIX)", run(&p, native, nr(libc::SYS_socket), 1)),
            ("socket(AF_INET)", run(&p, native, nr(libc::SYS_socket), 2)),
            (
                "socket(AF_NETLINK)",
                run(&p, native, nr(libc::SYS_socket), 16),
            ),
            ("x32 read", run(&p, native, 0x4000_0000, 0)),
            ("i386 read", run(&p, 0x4000_0003, 3, 0)),
        ];

        let expected = [
            ("read", RET_ALLOW),
            ("ptrace", RET_ERRNO | 1),
            ("io_uring_setup", RET_ERRNO | 38),
            ("keyctl", RET_ERRNO | 1),
            ("socket(AF_UNIX)", RET_ALLOW),
            ("socket(AF_INET)", RET_ERRNO | 97),
            ("socket(AF_NETLINK)", RET_ERRNO | 97),
            ("x32 read", RET_KILL_PROCESS),
            ("i386 read", RET_KILL_PROCESS),
        ];
        assert_eq!(cases, expected);
    }

    #[test]
    fn encodes_eight_bytes_per_instruction() {
        let actual = encode(&[stmt(BPF_RET_K, RET_ALLOW)]);

        let mut expected = 6u16.to_ne_bytes().to_vec();
        expected.extend([0, 0]);
        expected.extend(RET_ALLOW.to_ne_bytes());
        assert_eq!(actual, expected);
    }
}
