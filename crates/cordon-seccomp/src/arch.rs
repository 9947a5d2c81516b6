//! The architectures a filter can be built for.

use std::fmt;

use serde::Serialize;

use crate::SeccompError;

/// A CPU architecture (and its native system-call ABI) that cordon builds filters for.
///
/// A filter names one architecture: a system call made through any other ABI is refused before
/// any rule is looked at, because the same number means a different call there.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Arch {
    /// x86_64, the 64-bit ABI only (i386 and x32 are refused by the filter).
    #[serde(rename = "x86_64")]
    X86_64,
    /// 64-bit little-endian ARM (the 32-bit compat ABI is refused by the filter).
    #[serde(rename = "aarch64")]
    Aarch64,
}

impl Arch {
    /// Every architecture cordon builds filters for.
    pub const ALL: [Arch; 2] = [Arch::X86_64, Arch::Aarch64];

    /// The architecture this process runs on.
    ///
    /// # Errors
    ///
    /// [`SeccompError::UnsupportedHostArch`], naming the host, on anything but 64-bit
    /// little-endian x86_64 or aarch64 (including an x32 or big-endian build, whose system calls
    /// the filters here would not describe).
    pub fn host() -> Result<Arch, SeccompError> {
        let arch = std::env::consts::ARCH;
        let little_endian = cfg!(target_endian = "little");
        let wide = cfg!(target_pointer_width = "64");
        match (arch, little_endian, wide) {
            ("x86_64", true, true) => Ok(Arch::X86_64),
            ("aarch64", true, true) => Ok(Arch::Aarch64),
            _ => {
                let mut described = arch.to_owned();
                if !little_endian {
                    described.push_str(" (big-endian)");
                }
                if !wide {
                    described.push_str(" (32-bit pointers)");
                }
                Err(SeccompError::UnsupportedHostArch { arch: described })
            }
        }
    }

    /// The name Rust and the kernel use for it: `x86_64`, `aarch64`.
    pub fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Aarch64 => "aarch64",
        }
    }

    /// The `AUDIT_ARCH_*` value the kernel reports in `seccomp_data.arch` for this ABI.
    pub fn audit_arch(self) -> u32 {
        match self {
            Arch::X86_64 => AUDIT_ARCH_X86_64,
            Arch::Aarch64 => AUDIT_ARCH_AARCH64,
        }
    }

    /// The `AUDIT_ARCH_*` constant's name, for the rule table.
    pub(crate) fn audit_arch_name(self) -> &'static str {
        match self {
            Arch::X86_64 => "AUDIT_ARCH_X86_64",
            Arch::Aarch64 => "AUDIT_ARCH_AARCH64",
        }
    }

    pub(crate) fn target(self) -> seccompiler::TargetArch {
        match self {
            Arch::X86_64 => seccompiler::TargetArch::x86_64,
            Arch::Aarch64 => seccompiler::TargetArch::aarch64,
        }
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

// EM_X86_64 (62) and EM_AARCH64 (183), each | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE.
const AUDIT_ARCH_X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
const AUDIT_ARCH_AARCH64: u32 = 183 | 0x8000_0000 | 0x4000_0000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audit_values_are_the_kernel_constants() {
        assert_eq!(Arch::X86_64.audit_arch(), 0xc000_003e);
        assert_eq!(Arch::Aarch64.audit_arch(), 0xc000_00b7);
    }

    #[cfg(all(target_arch = "x86_64", target_pointer_width = "64"))]
    #[test]
    fn host_is_x86_64() {
        assert_eq!(Arch::host().unwrap(), Arch::X86_64);
    }

    #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
    #[test]
    fn host_is_aarch64() {
        assert_eq!(Arch::host().unwrap(), Arch::Aarch64);
    }

    #[test]
    fn serializes_as_the_kernel_name() {
        for arch in Arch::ALL {
            let json = serde_json::to_string(&arch).unwrap();
            assert_eq!(json, format!("\"{}\"", arch.name()));
        }
    }
}
