//! Paths in the run's records and reports, whatever their bytes: a path that is UTF-8 is a JSON
//! string (as before), any other one the array of its bytes. A workspace may live under a name
//! that is not UTF-8, and a link's target is whatever the command wrote; neither may make a
//! record unwritable (the commit would then fail and apply nothing).

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serializer};

#[derive(Deserialize)]
#[serde(untagged)]
enum Repr {
    Text(String),
    Bytes(Vec<u8>),
}

fn write<S: Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
    match path.to_str() {
        Some(text) => s.serialize_str(text),
        None => s.serialize_bytes(path.as_os_str().as_bytes()),
    }
}

fn read(repr: Repr) -> PathBuf {
    match repr {
        Repr::Text(text) => PathBuf::from(text),
        Repr::Bytes(bytes) => PathBuf::from(OsString::from_vec(bytes)),
    }
}

/// For a `PathBuf` field: `#[serde(with = "crate::pathser")]`.
pub(crate) fn serialize<S: Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
    write(path, s)
}

/// See [`serialize`].
pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
    Repr::deserialize(d).map(read)
}

/// For an `Option<PathBuf>` field: `#[serde(with = "crate::pathser::option")]`.
pub(crate) mod option {
    use super::{Repr, read, write};
    use serde::{Deserialize, Deserializer, Serializer};
    use std::path::PathBuf;

    pub(crate) fn serialize<S: Serializer>(
        path: &Option<PathBuf>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match path {
            Some(p) => write(p, s),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<PathBuf>, D::Error> {
        Option::<Repr>::deserialize(d).map(|r| r.map(read))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Both {
        #[serde(with = "crate::pathser")]
        root: PathBuf,
        #[serde(with = "crate::pathser::option")]
        target: Option<PathBuf>,
    }

    #[test]
    fn any_path_round_trips_and_a_utf8_one_stays_a_string() {
        let odd = PathBuf::from(OsString::from_vec(b"/tmp/bad-\xff\xfe".to_vec()));
        for value in [
            Both {
                root: "/home/u/proj".into(),
                target: Some("../lib".into()),
            },
            Both {
                root: odd.clone(),
                target: Some(odd.clone()),
            },
            Both {
                root: "/w".into(),
                target: None,
            },
        ] {
            let text = serde_json::to_string(&value).unwrap();
            assert_eq!(
                serde_json::from_str::<Both>(&text).unwrap(),
                value,
                "{text}"
            );
        }
        let text = serde_json::to_string(&Both {
            root: "/home/u/proj".into(),
            target: None,
        })
        .unwrap();
        assert_eq!(text, r#"{"root":"/home/u/proj","target":null}"#);
    }
}
