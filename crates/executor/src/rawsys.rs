//! Raw system calls (inline `syscall` / `svc`): no `errno`, no C library state. For code that runs
//! in a process sharing the engine's memory, or between `fork` and `exec`.

#[cfg(target_arch = "x86_64")]
/// One raw system call `n` with six arguments; the kernel's return value (a negative errno on failure).
///
/// # Safety
/// `n` must be a valid system call and `a` its arguments: pointers valid for what the call reads or
/// writes, and nothing the call does may break the Rust memory model of the calling process.
pub(crate) unsafe fn call(n: libc::c_long, a: [usize; 6]) -> isize {
    let ret: isize;
    // SAFETY: the caller passes a valid system call; clobbers are declared.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") n as isize => ret,
            in("rdi") a[0], in("rsi") a[1], in("rdx") a[2],
            in("r10") a[3], in("r8") a[4], in("r9") a[5],
            lateout("rcx") _, lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

#[cfg(target_arch = "aarch64")]
/// One raw system call `n` with six arguments; the kernel's return value (a negative errno on failure).
///
/// # Safety
/// `n` must be a valid system call and `a` its arguments: pointers valid for what the call reads or
/// writes, and nothing the call does may break the Rust memory model of the calling process.
pub(crate) unsafe fn call(n: libc::c_long, a: [usize; 6]) -> isize {
    let ret: isize;
    // SAFETY: the caller passes a valid system call.
    unsafe {
        std::arch::asm!(
            "svc 0",
            in("x8") n as usize,
            inlateout("x0") a[0] as isize => ret,
            in("x1") a[1], in("x2") a[2], in("x3") a[3], in("x4") a[4], in("x5") a[5],
            options(nostack),
        );
    }
    ret
}

/// Other architectures: never called ([`crate::vmguard::SUPPORTED`] is false there).
///
/// # Safety
/// None needed (it does nothing); `unsafe` keeps the signature of the real shims.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub(crate) unsafe fn call(_n: libc::c_long, _a: [usize; 6]) -> isize {
    -(libc::ENOSYS as isize)
}

pub(crate) fn c(n: libc::c_long, args: &[usize]) -> isize {
    let mut a = [0usize; 6];
    a[..args.len()].copy_from_slice(args);
    // SAFETY: every call site passes arguments matching the system call.
    unsafe { call(n, a) }
}

pub(crate) fn exit(code: i32) -> ! {
    loop {
        c(libc::SYS_exit_group, &[code as usize]);
    }
}

/// Kernel `struct sigaction` (x86-64 and aarch64: handler, flags, restorer, mask).
#[repr(C)]
pub(crate) struct KernelSigaction {
    pub(crate) handler: usize,
    pub(crate) flags: u64,
    pub(crate) restorer: usize,
    pub(crate) mask: u64,
}
