//! Hive's aggregates `ngrams(sentences, n, k[, pf])` and `context_ngrams(sentences, context,
//! k[, pf])`: the `k` most frequent `n`-grams of a group's sentences (arrays of words, as
//! `sentences` gives them), each with its estimated frequency, as Hive's `NGramEstimator`
//! counts them: exactly while at most `2 * k * pf` distinct n-grams are held (`pf`, the
//! precision factor, is at least `1000 / k`), trimmed to the `k * pf` most frequent beyond
//! that, so a large group's counts are estimates that can only fall short. `context_ngrams`
//! counts the words in the NULLs of a context where its other words match
//! (`array('i', 'love', NULL)`: what follows "i love"); `ngrams` is the context of `n` NULLs,
//! which every run of `n` words matches ([`Context`]). Hive only: Spark has neither.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Float64Array, ListBuilder, StringBuilder,
};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields, Float64Type, Int64Type};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, Signature, Volatility,
};

use super::bad_arguments;

pub fn aggregates() -> Vec<AggregateUDF> {
    [false, true]
        .into_iter()
        .map(|in_context| {
            AggregateUDF::new_from_impl(NGrams {
                signature: Signature::user_defined(Volatility::Immutable),
                in_context,
            })
        })
        .collect()
}

/// The words an n-gram is found in: a word must match, a NULL is a word of the n-gram. An
/// `n`-gram of `ngrams` is found in `n` NULLs.
type Context = Vec<Option<String>>;

fn context_type() -> DataType {
    DataType::new_list(DataType::Utf8, true)
}

/// An n-gram's fields in the result: Hive's `ngram` and `estfrequency`.
fn ngram_fields() -> Fields {
    Fields::from(vec![
        Field::new("ngram", DataType::new_list(DataType::Utf8, true), true),
        Field::new("estfrequency", DataType::Float64, true),
    ])
}

fn result_type() -> DataType {
    DataType::new_list(DataType::Struct(ngram_fields()), true)
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct NGrams {
    signature: Signature,
    /// `context_ngrams`, whose second argument is the context; `ngrams`'s is `n`.
    in_context: bool,
}

impl AggregateUDFImpl for NGrams {
    fn name(&self) -> &str {
        if self.in_context {
            "context_ngrams"
        } else {
            "ngrams"
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        let takes = if self.in_context {
            "(array of sentences (arrays of strings) or of strings, context (array of strings \
             with a NULL for each word counted), k[, precision])"
        } else {
            "(array of sentences (arrays of strings) or of strings, n, k[, precision])"
        };
        let words = |t: &DataType| match t {
            DataType::List(item) | DataType::LargeList(item) => {
                super::is_string(item.data_type()) || item.data_type().is_null()
            }
            _ => false,
        };
        let text = match types.first() {
            Some(DataType::List(item)) | Some(DataType::LargeList(item))
                if words(item.data_type()) =>
            {
                DataType::new_list(DataType::new_list(DataType::Utf8, true), true)
            }
            Some(t) if words(t) => DataType::new_list(DataType::Utf8, true),
            _ => return Err(bad_arguments(self.name(), takes, types)),
        };
        let second = match types.get(1) {
            Some(t) if self.in_context && words(t) => context_type(),
            Some(t) if !self.in_context && super::is_integer(t) => DataType::Int64,
            _ => return Err(bad_arguments(self.name(), takes, types)),
        };
        if !(3..=4).contains(&types.len()) || !types[2..].iter().all(super::is_integer) {
            return Err(bad_arguments(self.name(), takes, types));
        }
        Ok([text, second]
            .into_iter()
            .chain(std::iter::repeat_n(DataType::Int64, types.len() - 2))
            .collect())
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(result_type())
    }

    fn documentation(&self) -> Option<&Documentation> {
        super::usage::documentation(self.name())
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let mut fields = super::list_and_parameters_state(args.name, result_type(), &["k", "pf"]);
        fields.push(Arc::new(Field::new(
            format!("{}[context]", args.name),
            context_type(),
            true,
        )));
        Ok(fields)
    }

    fn accumulator(&self, _: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(NGramEstimator {
            in_context: self.in_context,
            ..NGramEstimator::default()
        }))
    }
}

/// Hive's `NGramEstimator`: the n-grams seen and their counts, at most `2 * k * pf` of them.
#[derive(Debug, Default)]
struct NGramEstimator {
    /// `context_ngrams`'s (Hive reads a sentence from its end for it, from its start for
    /// `ngrams`, which decides what a trim keeps).
    in_context: bool,
    /// `(k, pf)`, from the first row that gives them.
    limits: Option<(usize, usize)>,
    /// From the first row that gives it, as Hive (a context that changes from row to row is
    /// not one).
    context: Option<Context>,
    counts: HashMap<Vec<String>, f64>,
}

impl NGramEstimator {
    fn set_limits(&mut self, k: i64, pf: Option<i64>) -> Result<()> {
        if self.limits.is_some() {
            return Ok(());
        }
        let (Ok(k @ 1..), Ok(pf @ 1..)) = (usize::try_from(k), usize::try_from(pf.unwrap_or(1)))
        else {
            return Err(DataFusionError::Execution(
                "ngrams: k and the precision factor must be positive".into(),
            ));
        };
        // Hive's minimum precision.
        let pf = if k * pf < 1000 { 1000 / k } else { pf };
        self.limits = Some((k, pf));
        Ok(())
    }

    fn add(&mut self, ngram: Vec<String>, count: f64) {
        *self.counts.entry(ngram).or_insert(0.0) += count;
        if let Some((k, pf)) = self.limits {
            if self.counts.len() > 2 * k * pf {
                self.trim(k * pf);
            }
        }
    }

    /// The n-grams, most frequent first and in the order of their words among equals.
    fn ranked(&self) -> Vec<(&Vec<String>, f64)> {
        let mut ranked: Vec<_> = self.counts.iter().map(|(g, c)| (g, *c)).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        ranked
    }

    /// Keeps the `keep` most frequent n-grams.
    fn trim(&mut self, keep: usize) {
        let dropped: Vec<Vec<String>> = self
            .ranked()
            .into_iter()
            .skip(keep)
            .map(|(g, _)| g.clone())
            .collect();
        for ngram in dropped {
            self.counts.remove(&ngram);
        }
    }

    /// The n-grams of one sentence's words wherever the context matches them; none that
    /// holds a NULL word.
    fn add_sentence(&mut self, words: &ArrayRef) {
        let Some(context) = self.context.take() else {
            return;
        };
        let words = words.as_string::<i32>();
        let starts = 0..(words.len() + 1).saturating_sub(context.len());
        let starts: Box<dyn Iterator<Item = usize>> = if self.in_context {
            Box::new(starts.rev())
        } else {
            Box::new(starts)
        };
        for start in starts {
            let mut ngram = Vec::new();
            let found = context.iter().enumerate().all(|(i, wanted)| {
                let word = (!words.is_null(start + i)).then(|| words.value(start + i));
                match (wanted, word) {
                    (None, Some(word)) => {
                        ngram.push(word.to_owned());
                        true
                    }
                    (Some(wanted), Some(word)) => wanted == word,
                    (_, None) => false,
                }
            });
            if found {
                self.add(ngram, 1.0);
            }
        }
        self.context = Some(context);
    }

    /// Sets the context from the first row that gives it (`ngrams`: `n` NULLs).
    fn set_context(&mut self, context: impl FnOnce() -> Result<Context>) -> Result<()> {
        if self.context.is_none() {
            self.context = Some(context()?);
        }
        Ok(())
    }

    /// The n-grams and counts as one list scalar of the result's type.
    fn to_scalar(&self, ranked: &[(&Vec<String>, f64)]) -> Result<ScalarValue> {
        let mut ngrams = ListBuilder::new(StringBuilder::new());
        for (ngram, _) in ranked {
            for word in *ngram {
                ngrams.values().append_value(word);
            }
            ngrams.append(true);
        }
        let counts = Float64Array::from_iter_values(ranked.iter().map(|(_, c)| *c));
        super::struct_list(
            ngram_fields(),
            vec![Arc::new(ngrams.finish()), Arc::new(counts)],
        )
    }
}

/// The first non-NULL integer of an argument's values.
fn first_integer(values: Option<&ArrayRef>) -> Option<i64> {
    values?.as_primitive::<Int64Type>().iter().flatten().next()
}

/// The first context of `context_ngrams`'s argument: its words, at least one NULL.
fn first_context(values: &ArrayRef) -> Option<Result<Context>> {
    let words = values.as_list::<i32>().iter().flatten().next()?;
    let context: Context = words
        .as_string::<i32>()
        .iter()
        .map(|w| w.map(str::to_owned))
        .collect();
    Some(if context.contains(&None) {
        Ok(context)
    } else {
        Err(DataFusionError::Execution(
            "context_ngrams: the context must hold a NULL for each word to count, as in \
             array('i', 'love', NULL)"
                .into(),
        ))
    })
}

impl Accumulator for NGramEstimator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let Some(k) = first_integer(values.get(2)) else {
            return Ok(());
        };
        if self.in_context {
            let Some(context) = first_context(&values[1]) else {
                return Ok(());
            };
            self.set_context(|| context)?;
        } else {
            let Some(n) = first_integer(values.get(1)) else {
                return Ok(());
            };
            self.set_context(|| {
                let n = usize::try_from(n).ok().filter(|&n| n > 0).ok_or_else(|| {
                    DataFusionError::Execution("ngrams: n must be positive".into())
                })?;
                Ok(vec![None; n])
            })?;
        }
        self.set_limits(k, first_integer(values.get(3)))?;
        for text in values[0].as_list::<i32>().iter().flatten() {
            match text.data_type() {
                DataType::List(_) => {
                    for sentence in text.as_list::<i32>().iter().flatten() {
                        self.add_sentence(&sentence);
                    }
                }
                _ => self.add_sentence(&text),
            }
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let (ks, pfs) = (
            states[1].as_primitive::<Int64Type>(),
            states[2].as_primitive::<Int64Type>(),
        );
        for (row, ngrams) in states[0].as_list::<i32>().iter().enumerate() {
            let Some(ngrams) = ngrams else { continue };
            if !ks.is_null(row) {
                self.set_limits(ks.value(row), (!pfs.is_null(row)).then(|| pfs.value(row)))?;
            }
            if self.context.is_none() && !states[3].is_null(row) {
                let words = states[3].as_list::<i32>().value(row);
                let words = words.as_string::<i32>();
                self.context = Some(words.iter().map(|w| w.map(str::to_owned)).collect());
            }
            let ngrams = ngrams.as_struct();
            let words = ngrams.column(0).as_list::<i32>();
            let counts = ngrams.column(1).as_primitive::<Float64Type>();
            for (ngram, count) in words.iter().zip(counts.iter()) {
                let (Some(ngram), Some(count)) = (ngram, count) else {
                    continue;
                };
                let ngram = ngram
                    .as_string::<i32>()
                    .iter()
                    .map(|w| w.unwrap_or_default().to_owned())
                    .collect();
                self.add(ngram, count);
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let ranked = self.ranked();
        let (k, pf) = match self.limits {
            Some((k, pf)) => (Some(k as i64), Some(pf as i64)),
            None => (None, None),
        };
        let context = self.context.as_ref().map(|context| {
            let mut words = ListBuilder::new(StringBuilder::new());
            for word in context {
                words.values().append_option(word.as_deref());
            }
            words.append(true);
            ScalarValue::List(Arc::new(words.finish()))
        });
        Ok(vec![
            self.to_scalar(&ranked)?,
            ScalarValue::Int64(k),
            ScalarValue::Int64(pf),
            context.map_or_else(|| ScalarValue::try_from(context_type()), Ok)?,
        ])
    }

    /// The `k` most frequent n-grams; NULL for a group without any, as Hive.
    fn evaluate(&mut self) -> Result<ScalarValue> {
        let Some((k, _)) = self.limits.filter(|_| !self.counts.is_empty()) else {
            return ScalarValue::try_from(result_type());
        };
        let mut ranked = self.ranked();
        ranked.truncate(k);
        self.to_scalar(&ranked)
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
            + self
                .counts
                .keys()
                .map(|g| g.iter().map(|w| w.len() + 24).sum::<usize>() + 32)
                .sum::<usize>()
    }
}
