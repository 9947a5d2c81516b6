//! docs/credential-stores.md agrees with the masks: a row says "home + mask" exactly when a
//! default home mask covers its path, and names that mask.

use std::path::Path;

use cordon_policy::Policy;

#[test]
fn the_survey_names_the_masks_that_cover_its_rows() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/credential-stores.md"),
    )
    .unwrap();
    let mut rows = 0;
    for line in text
        .lines()
        .filter(|l| l.starts_with("| ") && l[2..].starts_with(|c: char| c.is_ascii_digit()))
    {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let path = cells[4]
            .trim_matches('`')
            .trim_start_matches("~/")
            .trim_end_matches('/');
        let kept = cells[5];
        let mask = Policy::HOME_CREDENTIAL_MASKS
            .iter()
            .find(|m| Path::new(path).starts_with(m));
        match mask {
            Some(m) => assert_eq!(kept, format!("home + mask `~/{m}`"), "{line}"),
            None => assert_eq!(kept, "home", "{line}"),
        }
        rows += 1;
    }
    assert!(rows >= 100, "{rows} rows");
}
