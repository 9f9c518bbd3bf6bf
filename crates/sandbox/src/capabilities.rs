//! Dropping every capability before the command starts.
//!
//! The helper holds all capabilities of the user namespace it created (it needs them for the
//! mounts and the loopback interface). The command must hold none: not in that namespace, and —
//! for root — not again after `execve`, where the kernel would otherwise hand uid 0 a full set.
//! So the bounding set is emptied, the ambient set cleared, the securebits that grant root its
//! capabilities on exec switched off and locked, and the process's own sets zeroed.

use crate::SandboxError;

// linux/securebits.h
const SECBIT_NOROOT: libc::c_ulong = 1 << 0;
const SECBIT_NOROOT_LOCKED: libc::c_ulong = 1 << 1;
const SECBIT_NO_SETUID_FIXUP: libc::c_ulong = 1 << 2;
const SECBIT_NO_SETUID_FIXUP_LOCKED: libc::c_ulong = 1 << 3;
const SECBIT_KEEP_CAPS_LOCKED: libc::c_ulong = 1 << 5;
const SECBIT_NO_CAP_AMBIENT_RAISE: libc::c_ulong = 1 << 6;
const SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED: libc::c_ulong = 1 << 7;

/// `_LINUX_CAPABILITY_VERSION_3`.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Drop every capability of the calling process, for good (see the module documentation).
#[allow(unsafe_code)]
pub fn drop_all() -> Result<(), SandboxError> {
    let fail = |what: &str| {
        SandboxError::unavailable(format!(
            "cannot drop capabilities: {what}: {}",
            nix::Error::last()
        ))
    };
    // SAFETY: each prctl below takes integer arguments only.
    unsafe {
        // Capabilities are numbered densely; the kernel refuses the first number past its last.
        for cap in 0..64 {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) < 0 {
                if nix::Error::last() == nix::Error::EINVAL {
                    break;
                }
                return Err(fail("bounding set"));
            }
        }
        if libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        ) < 0
        {
            return Err(fail("ambient set"));
        }
        let bits = SECBIT_NOROOT
            | SECBIT_NOROOT_LOCKED
            | SECBIT_NO_SETUID_FIXUP
            | SECBIT_NO_SETUID_FIXUP_LOCKED
            | SECBIT_KEEP_CAPS_LOCKED
            | SECBIT_NO_CAP_AMBIENT_RAISE
            | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
        if libc::prctl(libc::PR_SET_SECUREBITS, bits, 0, 0, 0) < 0 {
            return Err(fail("securebits"));
        }
    }
    let mut header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = [CapData::default(); 2];
    // SAFETY: version 3 takes a header and two data structures, all of which outlive the call.
    if unsafe { libc::syscall(libc::SYS_capset, &raw mut header, data.as_ptr()) } < 0 {
        return Err(fail("capset"));
    }
    Ok(())
}
