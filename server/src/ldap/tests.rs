use super::*;

fn settings(bind_as: BindAs) -> LdapSettings {
    LdapSettings {
        urls: vec!["ldap://127.0.0.1:1".to_owned()],
        bind_as,
        user_bases: Vec::new(),
        admission: Admission::default(),
        tls: LdapTls::default(),
    }
}

#[test]
fn dn_values_are_escaped_so_that_a_user_name_cannot_name_another_entry() {
    assert_eq!(escape_dn_value("alice"), "alice");
    assert_eq!(escape_dn_value("o'brien.jr-2"), "o'brien.jr-2");
    assert_eq!(escape_dn_value("alice,ou=admins"), "alice\\,ou\\=admins");
    assert_eq!(escape_dn_value("*"), "\\2A");
    assert_eq!(
        escape_dn_value("a+b\"c;d<e>f\\g"),
        "a\\+b\\\"c\\;d\\<e\\>f\\\\g"
    );
    assert_eq!(escape_dn_value("#x#"), "\\#x#");
    assert_eq!(escape_dn_value(" x y "), "\\ x y\\ ");
    assert_eq!(escape_dn_value(" "), "\\ ");
    assert_eq!(escape_dn_value("a\0b\nc"), "a\\00b\\0Ac");
    assert_eq!(escape_dn_value("Jürgen"), "Jürgen");
}

#[test]
fn user_names_become_dns_by_each_pattern_or_a_principal_in_the_domain() {
    let patterns = settings(BindAs::Patterns(vec![
        "uid=%s,ou=people,dc=example,dc=com".to_owned(),
        "cn=%s,ou=admins,dc=example,dc=com".to_owned(),
    ]));
    assert_eq!(
        patterns.bind_names("alice").unwrap(),
        [
            "uid=alice,ou=people,dc=example,dc=com",
            "cn=alice,ou=admins,dc=example,dc=com"
        ]
    );
    assert_eq!(
        patterns.bind_names("x,ou=admins").unwrap()[0],
        "uid=x\\,ou\\=admins,ou=people,dc=example,dc=com"
    );
    assert_eq!(patterns.bind_names(""), None);
    assert_eq!(patterns.bind_names(" alice"), None);
    assert_eq!(patterns.bind_names("alice\t"), None);
    assert_eq!(patterns.bind_names("a\u{7f}"), None);
    let domain = settings(BindAs::Domain("corp.example.com".to_owned()));
    assert_eq!(
        domain.bind_names("alice").unwrap(),
        ["alice@corp.example.com"]
    );
    for user in ["alice@other.com", "CORP\\alice", "cn=admin,dc=corp", "*"] {
        assert_eq!(domain.bind_names(user), None, "{user}");
    }
}

#[test]
fn the_base_dn_gives_the_uid_pattern() {
    let config = ServerConfig::from_yaml(
        "authentication: LDAP\nldap-url: ldap://h\nldap-base-dn: ou=people,dc=example,dc=com\n",
    )
    .unwrap();
    assert_eq!(
        LdapSettings::from_config(&config).unwrap().bind_as,
        BindAs::Patterns(vec!["uid=%s,ou=people,dc=example,dc=com".to_owned()])
    );
}

#[test]
fn empty_passwords_are_refused_without_asking_the_directory() {
    let ldap = LdapAuthenticator::new(settings(BindAs::Domain("example.com".to_owned())));
    let message = ldap.authenticate("alice", "").unwrap_err();
    assert!(
        message.starts_with("wrong user name or password for user 'alice'"),
        "{message}"
    );
}

#[test]
fn a_directory_that_does_not_answer_is_the_operators_problem_not_the_users() {
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    let ldap = LdapAuthenticator::new(settings(BindAs::Patterns(vec![
        "uid=%s,dc=example,dc=com".to_owned()
    ])));
    let message = ldap.authenticate("alice", "alice-pw").unwrap_err();
    assert!(
        message.contains("LDAP server does not answer")
            && message.contains("ask an operator")
            && !message.contains("wrong user name or password")
            && !message.contains("alice-pw"),
        "{message}"
    );
}

#[test]
fn an_ldaps_server_whose_handshake_fails_is_unreachable_too() {
    // A TCP listener that hangs up at once: the TLS client is built, its handshake fails.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hang_up = std::thread::spawn(move || drop(listener.accept()));
    let ldap = LdapAuthenticator::new(LdapSettings {
        urls: vec![format!("ldaps://127.0.0.1:{port}")],
        ..settings(BindAs::Domain("example.com".to_owned()))
    });
    let message = ldap.authenticate("alice", "alice-pw").unwrap_err();
    assert!(message.contains("LDAP server does not answer"), "{message}");
    hang_up.join().unwrap();
}

fn config(yaml: &str) -> Result<LdapSettings, String> {
    let config =
        ServerConfig::from_yaml(&format!("authentication: LDAP\nldap-url: ldap://h\n{yaml}"))
            .unwrap();
    LdapSettings::from_config(&config)
}

#[test]
fn search_filter_values_are_escaped_so_that_a_user_name_cannot_widen_a_search() {
    use query::escape_filter_value as escape;
    assert_eq!(escape("alice"), "alice");
    assert_eq!(escape("*"), "\\2a");
    assert_eq!(escape("*)(uid=*"), "\\2a\\29\\28uid=\\2a");
    assert_eq!(escape("a\\b"), "a\\5cb");
    assert_eq!(escape("a\0b\nc"), "a\\00b\\0ac");
    assert_eq!(escape("Jürgen o'Neil, Jr."), "Jürgen o'Neil, Jr.");
    // Built into a filter, the name stays one value: the filter parses, as one assertion.
    let people = query::NamedUnder::by_key("uid", "ou=people,dc=example,dc=com");
    let filter = query::user(&people, "*)(uid=*");
    assert_eq!(
        filter,
        "(&(|(objectClass=person)(objectClass=user)(objectClass=inetOrgPerson))(uid=\\2a\\29\\28uid=\\2a))"
    );
    assert!(ldap3::parse_filter(&filter).is_ok());
    for user in ["*", "alice)(|(uid=*", "x\\", "\0", "a*b"] {
        let filter = query::user(&people, user);
        assert!(ldap3::parse_filter(&filter).is_ok(), "{filter}");
        assert!(!filter.contains("=*)"), "{filter}");
    }
}

#[test]
fn dn_patterns_give_the_base_and_attribute_ldap_searches_under() {
    let people = query::NamedUnder::from_pattern("uid=%s,ou=people,dc=example,dc=com").unwrap();
    assert_eq!(
        (
            people.base.as_str(),
            people.attribute.as_str(),
            people.value.as_str()
        ),
        ("ou=people,dc=example,dc=com", "uid", "%s")
    );
    assert_eq!(people.assertion("al*ce"), "(uid=al\\2ace)");
    let prefixed = query::NamedUnder::from_pattern("cn=svc-%s, ou=x\\,y,dc=c").unwrap();
    assert_eq!(prefixed.base, "ou=x\\,y,dc=c");
    assert_eq!(prefixed.assertion("a(b"), "(cn=svc-a\\28b)");
    for bad in ["uid=alice,ou=%s", "uid=%s", "%s,dc=c", "u)(x=%s,dc=c"] {
        assert_eq!(query::NamedUnder::from_pattern(bad), None, "{bad}");
    }
    assert!(query::is_attribute("sAMAccountName"));
    assert!(query::is_attribute("0.9.2342.19200300.100.1.1"));
    for bad in ["", "uid)", "a b", "-x", "member=*"] {
        assert!(!query::is_attribute(bad), "{bad}");
    }
}

#[test]
fn group_and_custom_ldap_queries_escape_the_user_and_its_dn() {
    let groups = query::NamedUnder::by_key("cn", "ou=groups,dc=example,dc=com");
    assert_eq!(
        query::groups_with_member(
            "groupOfNames",
            &groups,
            &["analysts".to_owned(), "ops*".to_owned()],
            "member",
            "uid=a\\2Cb,ou=people,dc=example,dc=com",
            "a,b*",
        ),
        "(&(objectClass=groupOfNames)(|(cn=analysts)(cn=ops\\2a))\
         (|(member=uid=a\\5c2Cb,ou=people,dc=example,dc=com)(member=a,b\\2a)))"
    );
    assert_eq!(
        query::group("groupOfNames", &groups, "x)(cn=*"),
        "(&(objectClass=groupOfNames)(cn=x\\29\\28cn=\\2a))"
    );
    assert_eq!(
        query::lists_group("memberOf", "cn=a(b),ou=groups"),
        "(memberOf=cn=a\\28b\\29,ou=groups)"
    );
    assert_eq!(
        query::custom("(&(objectClass=person)(uid=%s))", "*)(uid=*"),
        "(&(objectClass=person)(uid=\\2a\\29\\28uid=\\2a))"
    );
    assert_eq!(
        query::comparable_dn(" UID=Alice , ou=People,DC=example, dc=com"),
        "uid=alice,ou=people,dc=example,dc=com"
    );
}

#[test]
fn a_bind_dn_makes_the_gateway_search_for_users_by_the_guid_key_or_the_patterns() {
    let settings = config(
        "ldap-bind-dn: cn=kumiho,dc=example,dc=com\nldap-bind-password: s3cret-Pw\n\
         ldap-base-dn: dc=example,dc=com\nldap-guid-key: sAMAccountName\n",
    )
    .unwrap();
    assert_eq!(
        settings.bind_as,
        BindAs::ServiceAccount {
            dn: "cn=kumiho,dc=example,dc=com".to_owned(),
            password: crate::cluster::Secret("s3cret-Pw".to_owned()),
        }
    );
    assert_eq!(
        settings.user_bases,
        [query::NamedUnder::by_key(
            "sAMAccountName",
            "dc=example,dc=com"
        )]
    );
    assert_eq!(settings.bind_names("alice"), Some(Vec::new()));
    assert_eq!(settings.bind_names(" alice"), None);
    assert!(!format!("{settings:?}").contains("s3cret-Pw"));
    let patterns = config(
        "ldap-bind-dn: cn=kumiho,dc=example,dc=com\nldap-bind-password: pw\n\
         ldap-user-dn-pattern: uid=%s,ou=people,dc=example,dc=com:cn=%s,ou=admins,dc=example,dc=com\n",
    )
    .unwrap();
    assert_eq!(patterns.user_bases.len(), 2);
    assert_eq!(patterns.user_bases[1].attribute, "cn");
    // Without a bind DN, the base DN's pattern uses the guid key.
    assert_eq!(
        config("ldap-base-dn: dc=example,dc=com\nldap-guid-key: cn\n")
            .unwrap()
            .bind_as,
        BindAs::Patterns(vec!["cn=%s,dc=example,dc=com".to_owned()])
    );
}

#[test]
fn ldap_filters_are_read_from_lists_or_comma_separated_text() {
    let settings = config(
        "ldap-base-dn: dc=example,dc=com\nldap-user-filter: Alice, bob\n\
         ldap-group-filter: [analysts, ops]\nldap-group-dn-pattern: cn=%s,ou=groups,dc=example,dc=com\n",
    )
    .unwrap();
    assert_eq!(settings.admission.users, ["alice", "bob"]);
    let groups = settings.admission.groups.unwrap();
    assert_eq!(groups.names, ["analysts", "ops"]);
    assert_eq!(
        groups.bases,
        [query::NamedUnder::by_key(
            "cn",
            "ou=groups,dc=example,dc=com"
        )]
    );
    assert_eq!(
        (groups.class.as_str(), groups.membership_key.as_str()),
        ("groupOfNames", "member")
    );
    assert_eq!(groups.user_membership_key, None);
    let by_user = config(
        "ldap-base-dn: dc=example,dc=com\nldap-group-filter: analysts\n\
         ldap-user-membership-key: memberOf\nldap-group-class-key: group\n",
    )
    .unwrap()
    .admission
    .groups
    .unwrap();
    assert_eq!(by_user.user_membership_key.as_deref(), Some("memberOf"));
    assert_eq!(
        by_user.bases,
        [query::NamedUnder::by_key("uid", "dc=example,dc=com")]
    );
    let custom = config(
        "ldap-base-dn: dc=example,dc=com\nldap-custom-query: (&(objectClass=person)(uid=%s))\n",
    )
    .unwrap()
    .admission
    .custom_query
    .unwrap();
    assert_eq!(custom.base, "dc=example,dc=com");
}

#[test]
fn ldap_settings_that_cannot_work_say_what_to_change() {
    let error = |yaml: &str| config(yaml).unwrap_err();
    let base = "ldap-base-dn: dc=example,dc=com\n";
    assert!(error("ldap-bind-dn: cn=k,dc=c\nldap-base-dn: dc=c\n").contains("go together"));
    assert!(error("ldap-bind-password: pw\nldap-base-dn: dc=c\n").contains("go together"));
    assert!(
        error("ldap-bind-dn: cn=k,dc=c\nldap-bind-password: pw\nldap-domain: c.com\n")
            .contains("remove ldap-domain")
    );
    assert!(
        error("ldap-bind-dn: cn=k,dc=c\nldap-bind-password: pw\n").contains("needs ldap-base-dn")
    );
    assert!(error(
        "ldap-bind-dn: cn=k,dc=c\nldap-bind-password: pw\nldap-user-dn-pattern: uid=x,ou=%s\n"
    )
    .contains("first RDN holds %s"));
    assert!(
        error("ldap-user-dn-pattern: uid=%s,dc=c\nldap-group-filter: g\n")
            .contains("ldap-group-filter needs ldap-group-dn-pattern")
    );
    assert!(
        error("ldap-domain: c.com\nldap-group-filter: g\nldap-group-dn-pattern: cn=%s,dc=c\n")
            .contains("set ldap-base-dn")
    );
    assert!(error(&format!(
        "{base}ldap-custom-query: (uid=%s)\nldap-user-filter: a\n"
    ))
    .contains("takes the place of"));
    assert!(
        error(&format!("{base}ldap-custom-query: (uid=%s\n")).contains("not an LDAP search filter")
    );
    assert!(
        error("ldap-user-dn-pattern: uid=%s,dc=c\nldap-custom-query: (uid=%s)\n")
            .contains("needs ldap-base-dn")
    );
    assert!(
        error(&format!("{base}ldap-user-membership-key: memberOf\n"))
            .contains("ldap-group-filter is not")
    );
    assert!(error(&format!("{base}ldap-group-membership-key: memberUid\n")).contains("remove it"));
    assert!(error(&format!("{base}ldap-guid-key: uid)(x\n")).contains("not an LDAP attribute"));
    assert!(error(&format!(
        "{base}ldap-group-filter: g\nldap-group-class-key: \"a b\"\n"
    ))
    .contains("ldap-group-class-key"));
}

#[test]
fn a_service_account_on_a_directory_that_does_not_answer_is_the_operators_problem() {
    let ldap = LdapAuthenticator::new(LdapSettings {
        user_bases: vec![query::NamedUnder::by_key("uid", "dc=example,dc=com")],
        ..settings(BindAs::ServiceAccount {
            dn: "cn=kumiho,dc=example,dc=com".to_owned(),
            password: crate::cluster::Secret("service-Pw".to_owned()),
        })
    });
    let message = ldap.authenticate("alice", "alice-pw").unwrap_err();
    assert!(
        message.contains("LDAP server does not answer") && !message.contains("service-Pw"),
        "{message}"
    );
    assert!(
        not_allowed("alice").contains("not allowed") && !not_allowed("alice").contains("wrong")
    );
}

#[test]
fn ldap_search_and_filter_flags_override_the_file_and_the_bind_password_never_prints() {
    use clap::Parser;
    let cli = crate::config::Cli::try_parse_from([
        "kumiho",
        "--authentication",
        "LDAP",
        "--ldap-url",
        "ldap://h",
        "--ldap-base-dn",
        "dc=example,dc=com",
        "--ldap-bind-dn",
        "cn=kumiho,dc=example,dc=com",
        "--ldap-bind-password",
        "flag-Secret-pw",
        "--ldap-user-filter",
        "alice,bob",
        "--ldap-group-filter",
        "analysts",
        "--ldap-group-membership-key",
        "uniqueMember",
        "--ldap-group-class-key",
        "groupOfUniqueNames",
    ])
    .unwrap();
    let config = cli.into_config().unwrap();
    assert!(!format!("{config:?}").contains("flag-Secret-pw"));
    let settings = LdapSettings::from_config(&config).unwrap();
    assert!(matches!(settings.bind_as, BindAs::ServiceAccount { .. }));
    assert_eq!(settings.admission.users, ["alice", "bob"]);
    let groups = settings.admission.groups.unwrap();
    assert_eq!(
        (groups.class.as_str(), groups.membership_key.as_str()),
        ("groupOfUniqueNames", "uniqueMember")
    );
    // Under another authentication, any ldap-* key stops the start.
    for yaml in [
        "ldap-bind-password: pw\n",
        "ldap-group-filter: [a]\n",
        "ldap-custom-query: (uid=%s)\n",
    ] {
        let error = ServerConfig::from_yaml(yaml)
            .unwrap()
            .validate()
            .unwrap_err();
        assert!(error.contains("authentication is NONE"), "{error}");
        assert!(!error.contains("pw\n"), "{error}");
    }
}

#[test]
fn tls_settings_that_would_do_nothing_or_name_a_bad_file_stop_the_start() {
    let base = "ldap-base-dn: dc=example,dc=com\n";
    let yaml = format!("authentication: LDAP\nldap-url: ldaps://h\nldap-start-tls: true\n{base}");
    let error = LdapSettings::from_config(&ServerConfig::from_yaml(&yaml).unwrap()).unwrap_err();
    assert!(error.contains("`ldaps://h` is ldaps://"), "{error}");
    let error = config(&format!("ldap-ca-file: /etc/ssl/ca.pem\n{base}")).unwrap_err();
    assert!(
        error.contains("no LDAP server is reached over TLS"),
        "{error}"
    );
    let error = config(&format!(
        "ldap-start-tls: true\nldap-ca-file: /nonexistent/ca.pem\n{base}"
    ))
    .unwrap_err();
    assert_eq!(error, "ldap-ca-file /nonexistent/ca.pem does not exist");
    let directory = tempfile::tempdir().unwrap();
    let not_pem = directory.path().join("ca.txt");
    std::fs::write(&not_pem, "the CA is the one in the wiki\n").unwrap();
    let error = config(&format!(
        "ldap-start-tls: true\nldap-ca-file: {}\n{base}",
        not_pem.display()
    ))
    .unwrap_err();
    assert!(error.contains("holds no PEM certificate"), "{error}");
    // Under another authentication the TLS settings stop the start as every ldap-* key.
    let error = ServerConfig::from_yaml("ldap-start-tls: true\n")
        .unwrap()
        .validate()
        .unwrap_err();
    assert!(
        error.contains("ldap-start-tls is set but authentication is NONE"),
        "{error}"
    );
}

#[test]
fn a_ca_file_is_trusted_in_place_of_the_systems_store() {
    let ca = rcgen::generate_simple_self_signed(vec!["ldap.example.com".to_owned()]).unwrap();
    let directory = tempfile::tempdir().unwrap();
    let ca_file = directory.path().join("ca.pem");
    std::fs::write(&ca_file, ca.cert.pem()).unwrap();
    let settings = config(&format!(
        "ldap-start-tls: true\nldap-ca-file: {}\nldap-base-dn: dc=example,dc=com\n",
        ca_file.display()
    ))
    .unwrap();
    assert!(settings.tls.start_tls);
    assert_eq!(settings.tls.trusted_cas, Some(vec![ca.cert.der().clone()]));
    assert!(settings.tls.client_config().is_some());
    assert!(LdapTls::default().client_config().is_none());
}

#[test]
fn passwords_to_loopback_servers_do_not_cross_a_network() {
    for url in [
        "ldap://localhost:389",
        "ldap://127.0.0.1",
        "ldap://[::1]:3389/",
    ] {
        assert!(on_loopback(url), "{url}");
    }
    for url in [
        "ldap://ldap.example.com",
        "ldap://10.0.0.1:389",
        "ldap://[2001:db8::1]",
    ] {
        assert!(!on_loopback(url), "{url}");
    }
    let plain = LdapTls::default();
    assert!(plain.in_clear("ldap://ldap.example.com"));
    assert!(!plain.in_clear("ldaps://ldap.example.com"));
    let upgraded = LdapTls {
        start_tls: true,
        trusted_cas: None,
    };
    assert!(!upgraded.in_clear("ldap://ldap.example.com"));
}
