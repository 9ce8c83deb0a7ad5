use super::*;

/// A bcrypt hash in the `$2y$` form `htpasswd -B` writes (cost 4: tests need no strength).
fn htpasswd_hash(password: &str) -> String {
    bcrypt::hash_with_result(password, 4)
        .unwrap()
        .format_for_version(bcrypt::Version::TwoY)
}

fn write(dir: &tempfile::TempDir, text: &str) -> PathBuf {
    let path = dir.path().join("passwords");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn lines_that_are_not_user_and_bcrypt_hash_are_refused_naming_the_line() {
    let hash = htpasswd_hash("pw");
    let ok = Users::parse(&format!(
        "# operators\n\nalice:{hash}\nbob:{}\n",
        bcrypt::hash("x", 4).unwrap()
    ))
    .unwrap();
    assert_eq!(ok.0.len(), 2);
    let error = |text: &str| Users::parse(text).unwrap_err();
    assert_eq!(error("alice"), "line 1: expected `user:bcrypt-hash`");
    assert_eq!(
        error(&format!("\n:{hash}")),
        "line 2: the user name is empty"
    );
    let plain = error("carol:secret-in-clear");
    assert!(
        plain.contains("line 1")
            && plain.contains("`carol` is not a bcrypt hash")
            && plain.contains("htpasswd -B"),
        "{plain}"
    );
    assert!(!plain.contains("secret-in-clear"), "{plain}");
    assert!(error(&format!("alice:{hash}\nalice:{hash}"))
        .contains("line 2: user `alice` is listed twice"));
}

#[test]
fn only_the_right_password_of_a_listed_user_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, &format!("alice:{}\n", htpasswd_hash("alice-pw")));
    let file = PasswordFile::open(&path).unwrap();
    assert_eq!(file.authenticate("alice", "alice-pw"), Ok(()));
    // Again, from what was remembered.
    assert_eq!(file.authenticate("alice", "alice-pw"), Ok(()));
    for (user, password) in [("alice", "not-it"), ("alice", ""), ("mallory", "alice-pw")] {
        let message = file.authenticate(user, password).unwrap_err();
        assert!(message.contains(&format!("user '{user}'")), "{message}");
        assert!(
            !message.contains("alice-pw") && !message.contains("not-it"),
            "{message}"
        );
    }
}

#[test]
fn a_changed_file_is_read_again_and_a_broken_one_keeps_the_last_good_version() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, &format!("alice:{}\n", htpasswd_hash("old")));
    let file = PasswordFile::open(&path).unwrap();
    assert_eq!(file.authenticate("alice", "old"), Ok(()));
    // A new password (a longer file, so the change shows even within one mtime tick).
    write(
        &dir,
        &format!(
            "# rotated\nalice:{}\nbob:{}\n",
            htpasswd_hash("new"),
            htpasswd_hash("bob-pw")
        ),
    );
    assert!(
        file.authenticate("alice", "old").is_err(),
        "the remembered old password is forgotten"
    );
    assert_eq!(file.authenticate("alice", "new"), Ok(()));
    assert_eq!(file.authenticate("bob", "bob-pw"), Ok(()));
    write(
        &dir,
        "alice:half-written-file-without-a-hash\n# padding so that the size changes\n",
    );
    assert_eq!(file.authenticate("bob", "bob-pw"), Ok(()));
    assert_eq!(file.authenticate("alice", "new"), Ok(()));
}

#[test]
fn a_missing_or_broken_file_stops_the_start_saying_which() {
    let dir = tempfile::tempdir().unwrap();
    let missing = PasswordFile::open(&dir.path().join("nope")).err().unwrap();
    assert!(
        missing.starts_with("password-file ") && missing.contains("nope"),
        "{missing}"
    );
    let path = write(&dir, "alice:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\n");
    let broken = PasswordFile::open(&path).err().unwrap();
    assert!(
        broken.contains("line 1") && broken.contains("`alice` is not a bcrypt hash"),
        "{broken}"
    );
}
