//! `write-block-device` (redirections, `dd`, `tee`, `cp`, disk tools) and `make-filesystem`.
//! A disk image in the workspace is a file like any other: `dd of=disk.img` and
//! `mkfs.ext4 disk.img` are allowed; only device paths are refused.

use super::{Ctx, Hit, operands};
use crate::judge::Arg;
use crate::paths::{Base, PathCtx, is_block_device, resolve};
use crate::verdict::Rule;

/// A write to `reading` (a redirection target, `of=`, a `tee` file), refused when it is a block
/// device or the SysRq trigger.
pub(crate) fn written(reading: &str, paths: &PathCtx<'_>) -> Option<Hit> {
    let resolved = resolve(reading, *paths)?;
    if resolved.base == Base::Root
        && resolved
            .comps
            .iter()
            .map(String::as_str)
            .eq(["proc", "sysrq-trigger"])
    {
        return Some(Hit::new(
            Rule::PowerState,
            "a write to /proc/sysrq-trigger can reboot, power off or crash the machine",
        ));
    }
    is_block_device(&resolved).then(|| {
        Hit::new(
            Rule::WriteBlockDevice,
            format!("`{reading}` is a disk, partition or memory device"),
        )
    })
}

fn any_written(args: &[&Arg], ctx: &Ctx<'_>) -> Option<Hit> {
    args.iter()
        .flat_map(|a| a.readings.iter())
        .find_map(|r| written(r, &ctx.paths))
}

fn any_device(args: &[&Arg], ctx: &Ctx<'_>) -> Option<String> {
    args.iter().flat_map(|a| a.readings.iter()).find_map(|r| {
        let resolved = resolve(r, ctx.paths)?;
        is_block_device(&resolved).then(|| r.clone())
    })
}

/// `dd of=DEVICE`.
pub(crate) fn dd(args: &[Arg], ctx: &Ctx<'_>) -> Option<Hit> {
    args.iter()
        .flat_map(|a| a.readings.iter())
        .filter_map(|r| r.strip_prefix("of="))
        .find_map(|target| written(target, &ctx.paths))
}

/// `tee [-a] FILE…`.
pub(crate) fn tee(args: &[Arg], ctx: &Ctx<'_>) -> Option<Hit> {
    any_written(&operands(args), ctx)
}

/// `cp`/`mv`/`install` onto a device: the destination, or `-t DIR`.
pub(crate) fn copy(args: &[Arg], ctx: &Ctx<'_>) -> Option<Hit> {
    let ops = operands(args);
    let mut targets: Vec<&Arg> = ops.last().into_iter().copied().collect();
    for (i, a) in args.iter().enumerate() {
        if a.text() == "-t" || a.text() == "--target-directory" {
            targets.extend(args.get(i + 1));
        }
    }
    any_written(&targets, ctx)
}

/// Arguments that make a partitioning tool only read or list.
fn read_only(name: &str, arg: &str) -> bool {
    let common = matches!(arg, "-h" | "--help" | "-V" | "--version");
    common
        || match name {
            "fdisk" | "gdisk" => matches!(arg, "-l" | "--list"),
            "sfdisk" => matches!(
                arg,
                "-l" | "--list"
                    | "-d"
                    | "--dump"
                    | "-s"
                    | "--show-size"
                    | "--verify"
                    | "-J"
                    | "--json"
                    | "-g"
                    | "--show-geometry"
                    | "-F"
                    | "--list-free"
            ),
            "sgdisk" => matches!(
                arg,
                "-p" | "--print"
                    | "-v"
                    | "--verify"
                    | "-i"
                    | "--info"
                    | "-O"
                    | "--print-mbr"
                    | "-P"
                    | "--pretend"
            ),
            "parted" => matches!(arg, "-l" | "--list" | "print"),
            _ => false,
        }
}

/// Tools that overwrite, partition or erase a device given as an argument.
pub(crate) fn disk_tool(name: &str, args: &[Arg], ctx: &Ctx<'_>) -> Option<Hit> {
    let device = if name == "ddrescue" {
        // ddrescue INFILE OUTFILE [MAPFILE]: rescuing from a device is its purpose.
        let ops = operands(args);
        any_device(&ops.get(1).into_iter().copied().collect::<Vec<_>>(), ctx)?
    } else {
        any_device(&args.iter().collect::<Vec<_>>(), ctx)?
    };
    let destructive = match name {
        "shred" | "blkdiscard" | "ddrescue" => true,
        "badblocks" => args
            .iter()
            .any(|a| a.text().starts_with('-') && a.text().contains('w')),
        "hdparm" => args.iter().any(|a| {
            let t = a.text();
            t.starts_with("--security-erase")
                || t.starts_with("--trim-sector")
                || t.starts_with("--write-sector")
                || t == "--make-bad-sector"
        }),
        "nvme" => args
            .iter()
            .any(|a| matches!(a.text(), "format" | "sanitize" | "write" | "write-zeroes")),
        _ => !args.iter().any(|a| read_only(name, a.text())),
    };
    destructive.then(|| {
        Hit::new(
            Rule::WriteBlockDevice,
            format!("`{name}` would overwrite or repartition the device `{device}`"),
        )
    })
}

/// macOS `diskutil` verbs that erase or repartition.
pub(crate) fn diskutil(args: &[Arg], _ctx: &Ctx<'_>) -> Option<Hit> {
    let verb = args.first()?.text().to_lowercase();
    let erasing = [
        "erasedisk",
        "erasevolume",
        "partitiondisk",
        "zerodisk",
        "randomdisk",
        "secureerase",
        "reformat",
    ];
    erasing.contains(&verb.as_str()).then(|| {
        Hit::new(
            Rule::MakeFilesystem,
            format!("`diskutil {verb}` erases or repartitions a disk"),
        )
    })
}

/// True for filesystem makers.
pub(crate) fn is_mkfs(name: &str) -> bool {
    name.starts_with("mkfs")
        || name.starts_with("newfs")
        || matches!(
            name,
            "mke2fs"
                | "mkswap"
                | "mkdosfs"
                | "mkntfs"
                | "mkexfatfs"
                | "mkudffs"
                | "mkreiserfs"
                | "mkjfs"
                | "wipefs"
                | "mformat"
        )
}

/// `mkfs*`, `mke2fs`, `mkswap`, `wipefs`, … on a device.
pub(crate) fn mkfs(name: &str, args: &[Arg], ctx: &Ctx<'_>) -> Option<Hit> {
    let all: Vec<&Arg> = args.iter().collect();
    let device = any_device(&all, ctx)?;
    Some(Hit::new(
        Rule::MakeFilesystem,
        format!("`{name}` would replace what is on `{device}`"),
    ))
}

#[cfg(test)]
mod tests {
    use super::super::testing::rule_of;
    use super::*;

    #[test]
    fn device_writes() {
        for line in [
            "dd if=/dev/zero of=/dev/sda",
            "dd if=img of=/dev/nvme0n1 bs=4M",
            "tee /dev/sdb",
            "tee -a /dev/mmcblk0",
            "cp disk.img /dev/sdc",
            "shred -n 1 /dev/sda",
            "blkdiscard /dev/nvme0n1",
            "fdisk /dev/sda",
            "parted /dev/sda mklabel gpt",
            "sgdisk --zap-all /dev/sda",
            "dd of=/dev/mem",
            "badblocks -wsv /dev/sdb",
        ] {
            assert_eq!(rule_of(line), Some(Rule::WriteBlockDevice), "{line}");
        }
        assert_eq!(rule_of("tee /proc/sysrq-trigger"), Some(Rule::PowerState));
    }

    #[test]
    fn ordinary_writes() {
        for line in [
            "dd if=/dev/zero of=disk.img bs=1M count=64",
            "dd if=/dev/sda of=backup.img",
            "tee out.log",
            "tee /dev/null",
            "cp a b",
            "fdisk -l /dev/sda",
            "parted /dev/sda print",
            "shred secret.txt",
            "dd if=/dev/urandom of=./key bs=32 count=1",
            "badblocks -sv /dev/sdb",
            "cp /dev/null empty",
        ] {
            assert_eq!(rule_of(line), None, "{line}");
        }
    }

    #[test]
    fn filesystems() {
        for line in [
            "mkfs.ext4 /dev/sda1",
            "mkfs -t xfs /dev/nvme0n1p2",
            "mke2fs /dev/sdb",
            "mkswap /dev/sda2",
            "wipefs -a /dev/sda",
            "mkfs.vfat -F 32 /dev/mmcblk0p1",
            "diskutil eraseDisk APFS x disk2",
        ] {
            assert_eq!(rule_of(line), Some(Rule::MakeFilesystem), "{line}");
        }
        for line in [
            "mkfs.ext4 -F disk.img",
            "mkswap ./swapfile",
            "wipefs -a image.raw",
            "diskutil list",
        ] {
            assert_eq!(rule_of(line), None, "{line}");
        }
    }
}
