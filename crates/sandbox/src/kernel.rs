//! What the running kernel offers.

/// The Landlock ABI version the running kernel offers (0 when Landlock is missing or disabled).
///
/// The `landlock` crate keeps this number private (it steers callers towards best-effort rule
/// sets); the helper needs it to refuse a run *before* it starts when the policy asks for more
/// than the kernel has, and callers need it to say why denial reporting is off.
#[allow(unsafe_code)]
pub fn landlock_abi() -> u8 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_ulong = 1;
    // SAFETY: with a null attribute pointer, size 0 and the VERSION flag, landlock_create_ruleset
    // only returns the ABI number (or -1 with errno); it reads no memory and creates no descriptor.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u8::try_from(version.max(0)).unwrap_or(u8::MAX)
}

#[cfg(test)]
mod tests {
    #[test]
    fn abi_is_stable_between_calls() {
        assert_eq!(super::landlock_abi(), super::landlock_abi());
    }
}
