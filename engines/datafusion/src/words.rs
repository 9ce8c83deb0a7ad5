//! A statement's tokens read front to back: the scanner of the statements the engine reads
//! itself instead of handing them to DataFusion's parser (Hive's commands in
//! [`crate::statement`], the warehouse's DDL in [`crate::warehouse`]).

use datafusion::sql::sqlparser::tokenizer::Token;

/// The tokens of a statement; whitespace is skipped when reading but kept, so that the text
/// between two tokens can be taken back as written.
pub(crate) struct Words {
    tokens: Vec<Token>,
    /// Indexes of the tokens that are not whitespace.
    significant: Vec<usize>,
    /// The next significant token to read.
    at: usize,
}

impl Words {
    pub(crate) fn new(tokens: Vec<Token>) -> Self {
        let significant = tokens
            .iter()
            .enumerate()
            .filter(|(_, t)| !matches!(t, Token::Whitespace(_) | Token::EOF))
            .map(|(i, _)| i)
            .collect();
        Self {
            tokens,
            significant,
            at: 0,
        }
    }

    /// The next token, not consumed.
    pub(crate) fn peek(&self) -> Option<&Token> {
        self.significant.get(self.at).map(|&i| &self.tokens[i])
    }

    /// Consumes the next token, whatever it is.
    pub(crate) fn skip(&mut self) {
        self.at += 1;
    }

    pub(crate) fn done(&self) -> bool {
        self.at >= self.significant.len()
    }

    /// How many tokens are left.
    pub(crate) fn remaining(&self) -> usize {
        self.significant.len().saturating_sub(self.at)
    }

    /// Consumes the next token if it is the unquoted keyword `word`.
    pub(crate) fn eat(&mut self, word: &str) -> bool {
        match self.peek() {
            Some(Token::Word(w))
                if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word) =>
            {
                self.at += 1;
                true
            }
            _ => false,
        }
    }

    /// Consumes the next token if it is one of the unquoted keywords `words`.
    pub(crate) fn eat_any(&mut self, words: &[&str]) -> bool {
        words.iter().any(|w| self.eat(w))
    }

    /// Whether the token just consumed is the keyword `word`.
    pub(crate) fn said(&self, word: &str) -> bool {
        let previous = self
            .at
            .checked_sub(1)
            .and_then(|at| self.significant.get(at));
        matches!(
            previous.map(|&i| &self.tokens[i]),
            Some(Token::Word(w)) if w.value.eq_ignore_ascii_case(word)
        )
    }

    /// Consumes the next token if it is `token` (punctuation).
    pub(crate) fn punct(&mut self, token: &Token) -> bool {
        if self.peek() == Some(token) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    /// Consumes an identifier: unquoted ones are lower-cased, as DataFusion and Hive do.
    pub(crate) fn identifier(&mut self) -> Option<String> {
        let name = match self.peek()? {
            Token::Word(w) => match w.quote_style {
                Some(_) => w.value.clone(),
                None => w.value.to_lowercase(),
            },
            _ => return None,
        };
        self.at += 1;
        Some(name)
    }

    /// Consumes a name of dot-separated identifiers (`t`, `db.t`, `catalog.db.t`).
    pub(crate) fn dotted_name(&mut self) -> Option<Vec<String>> {
        let mut parts = vec![self.identifier()?];
        while self.punct(&Token::Period) {
            parts.push(self.identifier()?);
        }
        Some(parts)
    }

    /// Consumes a string literal: in single or double quotes, as Hive takes them
    /// (`SHOW TABLES LIKE "sales*"`); the tokenizer reads the latter as a quoted identifier.
    pub(crate) fn string(&mut self) -> Option<String> {
        let text = match self.peek()? {
            Token::SingleQuotedString(s)
            | Token::DoubleQuotedString(s)
            | Token::EscapedStringLiteral(s) => s.clone(),
            Token::Word(w) if w.quote_style == Some('"') => w.value.clone(),
            _ => return None,
        };
        self.at += 1;
        Some(text)
    }

    /// Consumes a literal value: a string or a number, as text.
    pub(crate) fn value(&mut self) -> Option<String> {
        if let Some(Token::Number(n, _)) = self.peek() {
            let n = n.clone();
            self.at += 1;
            return Some(n);
        }
        self.string()
    }

    /// Consumes a value that may also be written bare, as Hive's DDL takes them
    /// (`PARTITION (dt=x)`, `TBLPROPERTIES (k=v)`).
    pub(crate) fn value_or_name(&mut self) -> Option<String> {
        self.value().or_else(|| self.identifier())
    }

    /// Consumes a parenthesised list, returning the text inside the parentheses as written.
    pub(crate) fn parenthesised(&mut self) -> Option<String> {
        if self.peek() != Some(&Token::LParen) {
            return None;
        }
        let start = self.at;
        let mut depth = 0usize;
        while let Some(token) = self.peek() {
            match token {
                Token::LParen => depth += 1,
                Token::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        let text = self.text(start + 1, self.at);
                        self.at += 1;
                        return Some(text);
                    }
                }
                _ => {}
            }
            self.at += 1;
        }
        self.at = start;
        None
    }

    /// Whether every remaining token is one of the unquoted keywords `allowed`.
    pub(crate) fn rest_is(&self, allowed: &[&str]) -> bool {
        self.significant[self.at.min(self.significant.len())..]
            .iter()
            .all(|&i| match &self.tokens[i] {
                Token::Word(w) => allowed.iter().any(|a| w.value.eq_ignore_ascii_case(a)),
                _ => false,
            })
    }

    /// The text of significant tokens `from..to` (and the whitespace between them).
    pub(crate) fn text(&self, from: usize, to: usize) -> String {
        let (Some(&first), last) = (self.significant.get(from), self.significant.get(to)) else {
            return String::new();
        };
        let end = last.copied().unwrap_or(self.tokens.len());
        self.tokens[first..end]
            .iter()
            .map(as_written)
            .collect::<String>()
            .trim()
            .to_owned()
    }

    /// The text of the remaining tokens.
    pub(crate) fn rest_text(&self) -> String {
        self.text(self.at, self.significant.len())
    }
}

/// A token as SQL text that reads back as the same token. sqlparser prints a string
/// literal's value between quotes as it is, so `'o''neil'` (read as `o'neil`) would come back
/// unterminated: the quote inside is doubled again.
fn as_written(token: &Token) -> String {
    match token {
        Token::SingleQuotedString(s) => format!("'{}'", s.replace('\'', "''")),
        Token::DoubleQuotedString(s) => format!("\"{}\"", s.replace('"', "\"\"")),
        // `"text"` and `name` are quoted words to the tokenizer.
        Token::Word(word) if matches!(word.quote_style, Some('"' | '`')) => {
            let quote = word.quote_style.unwrap_or('"').to_string();
            let doubled = quote.repeat(2);
            format!("{quote}{}{quote}", word.value.replace(&quote, &doubled))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use datafusion::sql::sqlparser::dialect::GenericDialect;
    use datafusion::sql::sqlparser::tokenizer::Tokenizer;

    use super::*;

    fn words(sql: &str) -> Words {
        Words::new(Tokenizer::new(&GenericDialect {}, sql).tokenize().unwrap())
    }

    #[test]
    fn the_text_taken_back_keeps_a_quote_inside_a_string() {
        let mut scanned = words(r#"AS SELECT 'frank o''neil' AS n, "say ""hi""" AS m"#);
        assert!(scanned.eat("as"));
        let text = scanned.rest_text();
        assert_eq!(text, r#"SELECT 'frank o''neil' AS n, "say ""hi""" AS m"#);
        let mut again = words(&text);
        assert!(again.eat("select"));
        assert_eq!(again.string().as_deref(), Some("frank o'neil"));
    }
}
