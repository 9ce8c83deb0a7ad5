//! Wildcard patterns as Hive reads them, with one matcher: `SHOW ... LIKE` names (`*` or `%`
//! any characters, `_` one, any case) and Hadoop's file globs of LOAD DATA (`*` any
//! characters, `?` one, case kept).

/// What a pattern's characters mean.
pub struct Wildcards {
    /// Characters standing for any run of characters, the empty one included.
    pub any_run: &'static [char],
    /// Characters standing for any one character.
    pub any_one: &'static [char],
    /// Whether `A` matches `a`.
    pub ignore_case: bool,
}

/// `SHOW TABLES LIKE 'line*'`: Hive's `*`, and SQL's `%` and `_`, which users type too.
pub const NAMES: Wildcards = Wildcards {
    any_run: &['*', '%'],
    any_one: &['_'],
    ignore_case: true,
};

/// `LOAD DATA INPATH '/landing/*.csv'`: Hadoop's globs as far as a file name goes.
pub const FILE_GLOBS: Wildcards = Wildcards {
    any_run: &['*'],
    any_one: &['?'],
    ignore_case: false,
};

impl Wildcards {
    /// Whether `name` matches `pattern`.
    pub fn matches(&self, pattern: &str, name: &str) -> bool {
        let (pattern, name): (Vec<char>, Vec<char>) =
            (pattern.chars().collect(), name.chars().collect());
        let same = |p: char, n: char| match self.ignore_case {
            true => p.to_lowercase().eq(n.to_lowercase()),
            false => p == n,
        };
        // One backtrack point: linear in practice, never exponential on hostile patterns.
        let (mut p, mut n, mut star) = (0, 0, None);
        while n < name.len() {
            match pattern.get(p) {
                Some(c) if self.any_run.contains(c) => {
                    star = Some((p, n));
                    p += 1;
                }
                Some(&c) if self.any_one.contains(&c) || same(c, name[n]) => {
                    p += 1;
                    n += 1;
                }
                _ => match star {
                    Some((star_p, star_n)) => {
                        p = star_p + 1;
                        n = star_n + 1;
                        star = Some((star_p, star_n + 1));
                    }
                    None => return false,
                },
            }
        }
        pattern[p..].iter().all(|c| self.any_run.contains(c))
    }
}
