//! The rules of Hadoop's own tests (`TestKerberosName`, realm `EXAMPLE.COM`), under Hadoop's
//! default mechanism (`hadoop`: a principal no rule maps is refused), and the parser's refusals.

use super::*;

/// `TestKerberosName.setUp`'s rules.
const HADOOP_RULES: &str = "RULE:[1:$1@$0](.*@YAHOO\\.COM)s/@.*//\n\
                            RULE:[2:$1](johndoe)s/^.*$/guest/\n\
                            RULE:[2:$1;$2](^.*;admin$)s/;admin$//\n\
                            RULE:[2:$2](root)\n\
                            DEFAULT";

fn mapped(rules: &str, principal: &str) -> Result<String, String> {
    AuthToLocal::parse(rules, "EXAMPLE.COM")
        .unwrap()
        .map(principal)
}

#[test]
fn hadoops_translations() {
    for (principal, user) in [
        ("omalley@EXAMPLE.COM", "omalley"),
        ("hdfs/10.0.0.1@EXAMPLE.COM", "hdfs"),
        ("oom@YAHOO.COM", "oom"),
        ("johndoe/zoo@FOO.COM", "guest"),
        ("joe/admin@FOO.COM", "joe"),
        ("joe/root@FOO.COM", "root"),
    ] {
        assert_eq!(
            mapped(HADOOP_RULES, principal).as_deref(),
            Ok(user),
            "{principal}"
        );
    }
}

#[test]
fn hadoops_anti_patterns_are_refused_naming_the_principal() {
    for malformed in ["owen/owen/owen@FOO.COM", "owen@foo/bar.com"] {
        let err = mapped(HADOOP_RULES, malformed).unwrap_err();
        assert!(
            err.contains(malformed) && err.contains("malformed"),
            "{err}"
        );
    }
    // No rule applies (Hadoop's NoMatchingRule under its default mechanism).
    for unmapped in ["foo@ACME.COM", "root/joe@FOO.COM"] {
        let err = mapped(HADOOP_RULES, unmapped).unwrap_err();
        assert!(
            err.contains(&format!(
                "no auth_to_local rule maps Kerberos principal {unmapped}"
            )) && err.contains("DEFAULT maps only the realm EXAMPLE.COM"),
            "{err}"
        );
    }
}

#[test]
fn hadoops_lower_case_rules() {
    let rules = "RULE:[1:$1]/L\n\
                 RULE:[2:$1]/L\n\
                 RULE:[2:$1;$2](^.*;admin$)s/;admin$///L\n\
                 RULE:[2:$1;$2](^.*;guest$)s/;guest$//g/L\n\
                 DEFAULT";
    for principal in [
        "Joe@FOO.COM",
        "Joe/root@FOO.COM",
        "Joe/admin@FOO.COM",
        "Joe/guestguest@FOO.COM",
    ] {
        assert_eq!(
            mapped(rules, principal).as_deref(),
            Ok("joe"),
            "{principal}"
        );
    }
}

#[test]
fn the_briefs_rule_maps_another_realm_and_default_only_its_own() {
    let rules = "RULE:[2:$1@$0](.*@OTHER\\.REALM)s/@.*//\nDEFAULT";
    assert_eq!(mapped(rules, "etl/batch@OTHER.REALM").as_deref(), Ok("etl"));
    assert_eq!(mapped(rules, "alice@EXAMPLE.COM").as_deref(), Ok("alice"));
    assert_eq!(mapped(rules, "bob/admin@EXAMPLE.COM").as_deref(), Ok("bob"));
    // One component from the other realm: the [2:...] rule is not for it.
    let err = mapped(rules, "carol@OTHER.REALM").unwrap_err();
    assert!(err.contains("carol@OTHER.REALM"), "{err}");
}

#[test]
fn a_result_that_is_not_a_user_name_is_refused() {
    // Hadoop's "Non-simple name": the format keeps the realm and nothing strips it.
    let err = mapped("RULE:[1:$1@$0]", "alice@EXAMPLE.COM").unwrap_err();
    assert!(
        err.contains("`alice@EXAMPLE.COM`, which is not a user name") && err.contains("[1:$1@$0]"),
        "{err}"
    );
    let err = mapped("RULE:[1:$1]s/.*//", "alice@EXAMPLE.COM").unwrap_err();
    assert!(err.contains("empty user name"), "{err}");
}

#[test]
fn replacements_are_written_as_java_writes_them() {
    // Groups, a group number followed by a digit, and an escaped dollar sign.
    // (Hadoop's syntax keeps `/` out of patterns and `)` out of the match.)
    let rules = r"RULE:[2:$1;$2](svc-.*)s/svc-(.*);(.*)/$2_$10_\$/";
    assert_eq!(mapped(rules, "svc-etl/h1@X").as_deref(), Ok("h1_etl0_$"));
    assert_eq!(java_replacement("$1", 1).unwrap(), "${1}");
    assert_eq!(java_replacement("$12", 12).unwrap(), "${12}");
    assert_eq!(java_replacement("$12", 1).unwrap(), "${1}2");
    assert_eq!(java_replacement("${name}x", 1).unwrap(), "${name}x");
    assert_eq!(java_replacement(r"a\\b\$", 0).unwrap(), r"a\b$$");
    assert!(java_replacement("$2", 1).unwrap_err().contains("group 2"));
    assert!(java_replacement("$x", 1)
        .unwrap_err()
        .contains("without a group"));
    assert!(java_replacement("x\\", 1)
        .unwrap_err()
        .contains("escapes nothing"));
}

#[test]
fn the_whole_formatted_name_must_match() {
    // Java's `matches`: `alice` alone does not match `alice@EXAMPLE.COM`.
    let rules = "RULE:[1:$1@$0](alice)s/@.*//\nRULE:[1:$1@$0](.*)s/@.*/_other/";
    assert_eq!(
        mapped(rules, "alice@EXAMPLE.COM").as_deref(),
        Ok("alice_other")
    );
}

#[test]
fn rules_that_cannot_work_are_refused_when_parsed() {
    for (rules, expected) in [
        ("RULE:[2:$1@$3]", "names $3"),
        ("RULE:[1:$1$]", "must be followed by a component number"),
        ("RULE:[:$1]", "number of components"),
        ("RULE:[0:$0]", "at least one component"),
        ("RULE:[1:$1]s/a(?=b)/x/", "is not a regex"),
        ("RULE:[1:$1]s/(/x/", "is not a regex"),
        ("RULE:[1:$1]s/a/$2/", "names group 2"),
        ("DEFAULT\nRULES:[1:$1]", "`RULES:[1:$1]` does not parse"),
        ("   ", "empty"),
    ] {
        let err = AuthToLocal::parse(rules, "R").unwrap_err();
        assert!(err.contains(expected), "{rules}: {err}");
    }
}

#[test]
fn rules_follow_each_other_on_lines_or_spaces_and_print_as_written() {
    let rules = AuthToLocal::parse("  RULE:[1:$1]/L   DEFAULT\n", "R").unwrap();
    assert_eq!(rules.to_string(), "RULE:[1:$1]/L\nDEFAULT");
    // A name that is already simple is its own user.
    assert_eq!(rules.map("alice").as_deref(), Ok("alice"));
}
