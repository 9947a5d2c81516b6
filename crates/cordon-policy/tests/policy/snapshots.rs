//! Each profile's default policy, and its plan on a typical fake host, as reviewed snapshots.

use cordon_policy::{FakeHost, Invocation, Plan, Policy, Profile};

#[test]
fn every_profile_default_policy() {
    for profile in Profile::ALL {
        let policy = Policy::for_profile(profile);
        insta::assert_yaml_snapshot!(format!("policy-{profile}"), policy);
    }
}

#[test]
fn every_profile_plan_on_a_typical_host() {
    let host = FakeHost::typical();
    for profile in Profile::ALL {
        let plan = Plan::resolve(
            &Policy::for_profile(profile),
            &Invocation::at("/home/u/proj"),
            &host,
        )
        .unwrap();
        insta::assert_yaml_snapshot!(format!("plan-{profile}"), plan);
    }
}
