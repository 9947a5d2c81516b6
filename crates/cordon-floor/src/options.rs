//! getopt-style option reading for programs whose options decide where their operands (or the
//! command they run) start. An option the table does not know is read both ways, as a flag and
//! as taking a value, so an unknown flag can never hide the real command from the floor.

/// Options of one program.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct OptSpec {
    /// Short options that take a value (`-u root`, `-uroot`).
    pub short_value: &'static str,
    /// Short options without a value.
    pub short_flag: &'static str,
    /// Long options that take a value (`--user root`, `--user=root`).
    pub long_value: &'static [&'static str],
    /// Long options without a value.
    pub long_flag: &'static [&'static str],
    /// `-10` is an option (nice's adjustment).
    pub numeric: bool,
}

/// One reading of a command line's options.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Parsed {
    /// Options in order: the short letter or the long name, and the value.
    pub opts: Vec<(String, Option<String>)>,
    /// Index of the first operand.
    pub operands: usize,
    /// True when an unknown option was read in this reading.
    pub guessed: bool,
}

impl Parsed {
    /// True when any of `names` was given.
    pub fn has(&self, names: &[&str]) -> bool {
        self.opts.iter().any(|(n, _)| names.contains(&n.as_str()))
    }

    /// The last value of any of `names`.
    pub fn value(&self, names: &[&str]) -> Option<&str> {
        self.opts
            .iter()
            .rev()
            .find(|(n, _)| names.contains(&n.as_str()))
            .and_then(|(_, v)| v.as_deref())
    }
}

/// Most readings the options of one command may have before the floor gives up.
pub(crate) const MAX_READINGS: usize = 16;

/// More readings than [`MAX_READINGS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooManyReadings;

enum Long {
    Value(&'static str),
    Flag(&'static str),
    Unknown,
}

fn long(spec: &OptSpec, name: &str) -> Long {
    if let Some(n) = spec.long_value.iter().find(|n| **n == name) {
        return Long::Value(n);
    }
    if let Some(n) = spec.long_flag.iter().find(|n| **n == name) {
        return Long::Flag(n);
    }
    // getopt_long accepts an unambiguous prefix.
    let values: Vec<&&str> = spec
        .long_value
        .iter()
        .filter(|n| n.starts_with(name))
        .collect();
    let flags: Vec<&&str> = spec
        .long_flag
        .iter()
        .filter(|n| n.starts_with(name))
        .collect();
    match (values.as_slice(), flags.as_slice()) {
        ([v], []) => Long::Value(v),
        ([], [f]) => Long::Flag(f),
        _ => Long::Unknown,
    }
}

/// Reads the options of `args` (the words after the program name) up to the first operand.
pub(crate) fn parse(args: &[String], spec: &OptSpec) -> Result<Vec<Parsed>, TooManyReadings> {
    let mut out = Vec::new();
    let mut stack = vec![(0usize, Parsed::default())];
    while let Some((mut i, mut cur)) = stack.pop() {
        loop {
            let Some(a) = args.get(i) else {
                cur.operands = args.len();
                out.push(cur);
                break;
            };
            if a == "--" {
                cur.operands = i + 1;
                out.push(cur);
                break;
            }
            if let Some(body) = a.strip_prefix("--") {
                let (name, inline) = match body.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_owned())),
                    None => (body, None),
                };
                match long(spec, name) {
                    Long::Value(n) => match inline {
                        Some(v) => {
                            cur.opts.push((n.into(), Some(v)));
                            i += 1;
                        }
                        None => {
                            cur.opts.push((n.into(), args.get(i + 1).cloned()));
                            i += 2;
                        }
                    },
                    Long::Flag(n) => {
                        cur.opts.push((n.into(), inline));
                        i += 1;
                    }
                    Long::Unknown => {
                        cur.guessed = true;
                        if inline.is_some() {
                            cur.opts.push((name.into(), inline));
                            i += 1;
                        } else {
                            let mut with_value = cur.clone();
                            with_value
                                .opts
                                .push((name.into(), args.get(i + 1).cloned()));
                            stack.push((i + 2, with_value));
                            cur.opts.push((name.into(), None));
                            i += 1;
                        }
                    }
                }
                continue;
            }
            if a.len() < 2 || !a.starts_with('-') {
                cur.operands = i;
                out.push(cur);
                break;
            }
            if spec.numeric && a[1..].chars().all(|c| c.is_ascii_digit()) {
                cur.opts.push(("numeric".into(), Some(a[1..].to_owned())));
                i += 1;
                continue;
            }
            let chars: Vec<char> = a.chars().collect();
            let mut next = i + 1;
            let mut j = 1;
            while j < chars.len() {
                let c = chars[j];
                let rest: String = chars[j + 1..].iter().collect();
                let take_value = |cur: &mut Parsed, next: &mut usize| {
                    if rest.is_empty() {
                        cur.opts.push((c.to_string(), args.get(i + 1).cloned()));
                        *next = i + 2;
                    } else {
                        cur.opts.push((c.to_string(), Some(rest.clone())));
                    }
                };
                if spec.short_value.contains(c) {
                    take_value(&mut cur, &mut next);
                    break;
                } else if spec.short_flag.contains(c) {
                    cur.opts.push((c.to_string(), None));
                } else {
                    cur.guessed = true;
                    let mut with_value = cur.clone();
                    let mut with_next = i + 1;
                    take_value(&mut with_value, &mut with_next);
                    stack.push((with_next, with_value));
                    cur.opts.push((c.to_string(), None));
                }
                j += 1;
            }
            i = next;
        }
        if out.len() + stack.len() > MAX_READINGS {
            return Err(TooManyReadings);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    const SUDO: OptSpec = OptSpec {
        short_value: "u",
        short_flag: "nS",
        long_value: &["user"],
        long_flag: &["stdin"],
        numeric: false,
    };

    #[test]
    fn known_options_give_one_reading() {
        let r = parse(&s(&["-nS", "-u", "root", "--", "rm"]), &SUDO).unwrap_or_default();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].operands, 4);
        assert!(r[0].has(&["S"]));
        assert_eq!(r[0].value(&["u", "user"]), Some("root"));
        let r = parse(&s(&["-uroot", "--std", "rm"]), &SUDO).unwrap_or_default();
        assert_eq!(r[0].operands, 2);
        assert!(r[0].has(&["stdin"]));
    }

    #[test]
    fn unknown_options_are_read_both_ways() {
        let r = parse(&s(&["-X", "rm", "/x"]), &SUDO).unwrap_or_default();
        let starts: Vec<usize> = r.iter().map(|p| p.operands).collect();
        assert_eq!(starts, vec![1, 2]);
    }

    #[test]
    fn too_many_unknowns_are_refused() {
        let args = s(&["-a", "-b", "-c", "-d", "-e", "-f", "-g", "x"]);
        assert_eq!(parse(&args, &SUDO), Err(TooManyReadings));
    }

    #[test]
    fn numeric_options() {
        let spec = OptSpec {
            numeric: true,
            ..OptSpec::default()
        };
        let r = parse(&s(&["-10", "make"]), &spec).unwrap_or_default();
        assert_eq!(r[0].operands, 1);
    }
}
