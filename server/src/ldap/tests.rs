use super::*;

fn settings(bind_as: BindAs) -> LdapSettings {
    LdapSettings {
        urls: vec!["ldap://127.0.0.1:1".to_owned()],
        bind_as,
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
        bind_as: BindAs::Domain("example.com".to_owned()),
    });
    let message = ldap.authenticate("alice", "alice-pw").unwrap_err();
    assert!(message.contains("LDAP server does not answer"), "{message}");
    hang_up.join().unwrap();
}
