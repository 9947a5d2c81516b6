//! The few classic-BPF instructions the filter uses, and their byte encoding.

use seccompiler::sock_filter;

/// `BPF_LD | BPF_W | BPF_ABS`: load a 32-bit word of `seccomp_data`.
pub(crate) const LD_W_ABS: u16 = 0x20;
/// `BPF_JMP | BPF_JA`: unconditional forward jump by `k`.
pub(crate) const JA: u16 = 0x05;
/// `BPF_JMP | BPF_JEQ | BPF_K`.
pub(crate) const JEQ_K: u16 = 0x15;
/// `BPF_JMP | BPF_JGE | BPF_K`.
pub(crate) const JGE_K: u16 = 0x35;
/// `BPF_RET | BPF_K`.
pub(crate) const RET_K: u16 = 0x06;

/// `offsetof(struct seccomp_data, nr)`.
pub(crate) const DATA_NR: u32 = 0;
/// `offsetof(struct seccomp_data, arch)`.
pub(crate) const DATA_ARCH: u32 = 4;

/// `BPF_MAXINSNS`: the kernel refuses longer filters.
pub(crate) const MAX_INSTRUCTIONS: usize = 4096;

/// Size of one `struct sock_filter`.
pub(crate) const INSTRUCTION_BYTES: usize = 8;

pub(crate) fn stmt(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

pub(crate) fn jump(code: u16, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

/// The instruction as text, for error messages.
pub(crate) fn describe(insn: &sock_filter) -> String {
    format!(
        "{{code {:#06x}, jt {}, jf {}, k {:#x}}}",
        insn.code, insn.jt, insn.jf, insn.k
    )
}

/// The `struct sock_filter` array as bytes: u16 code, u8 jt, u8 jf, u32 k. Both supported
/// architectures are little-endian, which is the byte order the kernel reads them in.
pub(crate) fn encode(program: &[sock_filter]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(program.len() * INSTRUCTION_BYTES);
    for insn in program {
        bytes.extend_from_slice(&insn.code.to_le_bytes());
        bytes.push(insn.jt);
        bytes.push(insn.jf);
        bytes.extend_from_slice(&insn.k.to_le_bytes());
    }
    bytes
}

/// The inverse of [`encode`]; a trailing partial instruction is ignored.
#[cfg(test)]
pub(crate) fn decode(bytes: &[u8]) -> Vec<sock_filter> {
    bytes
        .chunks_exact(INSTRUCTION_BYTES)
        .map(|c| sock_filter {
            code: u16::from_le_bytes([c[0], c[1]]),
            jt: c[2],
            jf: c[3],
            k: u32::from_le_bytes([c[4], c[5], c[6], c[7]]),
        })
        .collect()
}

/// A small interpreter for the instructions above, so unit tests can run the compiled program
/// against any `seccomp_data` on any host, for either architecture.
#[cfg(test)]
pub(crate) mod eval {
    use super::*;

    /// `BPF_ALU | BPF_AND | BPF_K`, which seccompiler emits for masked comparisons.
    const ALU_AND_K: u16 = 0x54;
    /// `BPF_JMP | BPF_JGT | BPF_K`, which seccompiler emits for other comparisons.
    const JGT_K: u16 = 0x25;

    /// `struct seccomp_data` (without the instruction pointer, which the filter never reads).
    #[derive(Debug, Clone, Copy)]
    pub(crate) struct Data {
        pub nr: u32,
        pub arch: u32,
        pub args: [u64; 6],
    }

    impl Data {
        fn word(&self, offset: u32) -> u32 {
            match offset {
                DATA_NR => self.nr,
                DATA_ARCH => self.arch,
                // Little-endian: low half of args[i] at 16 + 8i, high half at 20 + 8i.
                16..=63 if offset.is_multiple_of(4) => {
                    let arg = self.args[((offset - 16) / 8) as usize];
                    if offset.is_multiple_of(8) {
                        arg as u32
                    } else {
                        (arg >> 32) as u32
                    }
                }
                _ => panic!("load from unexpected seccomp_data offset {offset}"),
            }
        }
    }

    /// Runs `program` on `data` and returns the `SECCOMP_RET_*` value.
    pub(crate) fn run(program: &[sock_filter], data: &Data) -> u32 {
        let mut acc = 0u32;
        let mut pc = 0usize;
        loop {
            let insn = &program[pc];
            let (jt, jf) = (usize::from(insn.jt), usize::from(insn.jf));
            pc += 1;
            match insn.code {
                LD_W_ABS => acc = data.word(insn.k),
                ALU_AND_K => acc &= insn.k,
                JA => pc += insn.k as usize,
                JEQ_K => pc += if acc == insn.k { jt } else { jf },
                JGT_K => pc += if acc > insn.k { jt } else { jf },
                JGE_K => pc += if acc >= insn.k { jt } else { jf },
                RET_K => return insn.k,
                other => panic!("instruction {other:#06x} at {} is not interpreted", pc - 1),
            }
        }
    }

    /// The program as an assembly listing, one instruction a line, jump targets absolute.
    pub(crate) fn listing(program: &[sock_filter]) -> String {
        let mut out = String::new();
        for (pc, insn) in program.iter().enumerate() {
            let target = |offset: usize| pc + 1 + offset;
            let text = match insn.code {
                LD_W_ABS => match insn.k {
                    DATA_NR => "ld  [nr]".to_owned(),
                    DATA_ARCH => "ld  [arch]".to_owned(),
                    k => format!(
                        "ld  [args{}.{}]",
                        (k - 16) / 8,
                        if k % 8 == 0 { "lo" } else { "hi" }
                    ),
                },
                ALU_AND_K => format!("and #{:#x}", insn.k),
                JA => format!("ja  {}", target(insn.k as usize)),
                JEQ_K | JGT_K | JGE_K => {
                    let op = match insn.code {
                        JEQ_K => "jeq",
                        JGT_K => "jgt",
                        _ => "jge",
                    };
                    format!(
                        "{op} #{:#x}, {}, {}",
                        insn.k,
                        target(insn.jt.into()),
                        target(insn.jf.into())
                    )
                }
                RET_K => format!("ret {}", ret_name(insn.k)),
                _ => describe(insn),
            };
            out.push_str(&format!("{pc:4}: {text}\n"));
        }
        out
    }

    pub(crate) fn ret_name(k: u32) -> String {
        match k {
            0x7fff_0000 => "ALLOW".to_owned(),
            0x8000_0000 => "KILL_PROCESS".to_owned(),
            k if k & 0xffff_0000 == 0x0005_0000 => format!("ERRNO({})", k & 0xffff),
            k => format!("{k:#x}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_is_the_kernel_layout() {
        let insn = jump(JEQ_K, 0xc000_003e, 1, 2);
        assert_eq!(
            encode(std::slice::from_ref(&insn)),
            [0x15, 0x00, 1, 2, 0x3e, 0x00, 0x00, 0xc0]
        );
        assert_eq!(decode(&encode(std::slice::from_ref(&insn))), [insn]);
    }
}
