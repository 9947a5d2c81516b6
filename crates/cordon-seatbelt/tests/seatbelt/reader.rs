//! The test reader itself, checked against hand-written profile text, so that the properties
//! built on it mean what they say.

use crate::common::{Sexp, read, read_args, regex_matches, rules};

#[test]
fn reads_lists_atoms_strings_and_comments() {
    let forms =
        read("(version 1)\n; a comment (with \"quotes\"\n(allow file-read* (subpath \"/a b\"))")
            .unwrap();
    assert_eq!(forms.len(), 2);
    assert_eq!(
        forms[1],
        Sexp::List(vec![
            Sexp::Atom("allow".into()),
            Sexp::Atom("file-read*".into()),
            Sexp::List(vec![
                Sexp::Atom("subpath".into()),
                Sexp::Str(b"/a b".to_vec())
            ]),
        ])
    );
}

#[test]
fn decodes_every_escape_the_profile_reader_knows() {
    let forms = read(r#""q\"b\\n\nt\tr\rx\x0Ax\xffo\101z\q""#).unwrap();
    assert_eq!(
        forms,
        vec![Sexp::Str(b"q\"b\\n\nt\tr\rx\nx\xffoAzq".to_vec())]
    );
}

#[test]
fn refuses_what_would_change_structure() {
    assert!(read("(allow").is_err());
    assert!(read("(allow))").is_err());
    assert!(read("\"open").is_err());
    assert!(read("#\"raw\"").is_err());
    assert!(read(&format!("\"{}\"", "x".repeat(1024))).is_err());
    assert!(read("(allow \u{e9})").is_err());
}

#[test]
fn rules_and_arguments_read_back() {
    let r = rules("(version 1)\n(deny default)\n(allow file-write* (subpath (param \"W_0\")))");
    assert_eq!(r.len(), 2);
    assert_eq!(r[1].ops, ["file-write*"]);
    let args = read_args(&[
        "-p".into(),
        "(version 1)".into(),
        "-DW_0=/a=b".into(),
        "--".into(),
        "true".into(),
    ]);
    assert_eq!(args.params["W_0"], "/a=b");
    assert_eq!(args.command, ["true"]);
}

#[test]
fn regexes_run_on_bytes_with_seatbelt_syntax() {
    assert!(regex_matches(
        br"^/w(/[^/]*)*/\.env(/[^/]*)*$",
        b"/w/a/b/.env"
    ));
    assert!(regex_matches(
        br"^/w(/[^/]*)*/\.env(/[^/]*)*$",
        b"/w/.env/x"
    ));
    assert!(!regex_matches(
        br"^/w(/[^/]*)*/\.env(/[^/]*)*$",
        b"/w/a.env"
    ));
    assert!(regex_matches(b"^/\xff\n[^/]$", b"/\xff\nz"));
    assert!(regex_matches(b"^/a[^/]b$", b"/a\nb"));
}
