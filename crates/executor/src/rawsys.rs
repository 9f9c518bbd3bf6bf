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

/// The kernel's `struct clone_args` up to `cgroup` (`CLONE_ARGS_SIZE_VER2`).
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// `clone3(CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP)`: the child starts in the cgroup directory
/// `cgroup_fd` on the stack `stack..stack_top`, runs `child(arg)` and exits with its value; the
/// caller resumes once the child has exec'd or exited. The child's pid, or a negative errno (then
/// there is no child).
///
/// # Safety
/// As for `libc::clone` with `CLONE_VM | CLONE_VFORK`: `child` must only exec or exit, the stack
/// must be valid, unused and 16-byte aligned at its top, and `arg` valid until the child is gone.
#[cfg(target_arch = "x86_64")]
pub(crate) unsafe fn clone_vfork_into(
    child: extern "C" fn(*mut libc::c_void) -> libc::c_int,
    stack: *mut u8,
    stack_top: *mut u8,
    arg: *mut libc::c_void,
    cgroup_fd: i32,
) -> isize {
    let args = CloneArgs {
        flags: (libc::CLONE_VM | libc::CLONE_VFORK) as u64 | CLONE_INTO_CGROUP,
        exit_signal: libc::SIGCHLD as u64,
        stack: stack as u64,
        stack_size: stack_top as u64 - stack as u64,
        cgroup: cgroup_fd as u64,
        ..CloneArgs::default()
    };
    let ret: isize;
    // SAFETY: the child starts on its own stack with the registers of this thread: it calls
    // `child(arg)` (held in r12/r13, which the system call keeps) and exits without returning
    // into Rust code; the parent only takes the return value.
    unsafe {
        std::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            "mov rdi, r13",
            "call r12",
            "mov edi, eax",
            "mov eax, {exit}",
            "syscall",
            "ud2",
            "2:",
            exit = const libc::SYS_exit,
            inlateout("rax") libc::SYS_clone3 as isize => ret,
            in("rdi") &raw const args,
            in("rsi") std::mem::size_of::<CloneArgs>(),
            in("r12") child as usize,
            in("r13") arg as usize,
            lateout("rcx") _, lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

/// Other architectures: not available (the caller falls back to `libc::clone` and moving).
///
/// # Safety
/// None needed (it does nothing).
#[cfg(not(target_arch = "x86_64"))]
pub(crate) unsafe fn clone_vfork_into(
    _child: extern "C" fn(*mut libc::c_void) -> libc::c_int,
    _stack: *mut u8,
    _stack_top: *mut u8,
    _arg: *mut libc::c_void,
    _cgroup_fd: i32,
) -> isize {
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
